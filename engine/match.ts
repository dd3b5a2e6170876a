/**
 * @module Which hooks an event runs, in which order (SERVICE.md §2): policy → service → extension
 * → repository, each in its configuration order, matchers applied. Pure.
 */
import type { EventPoint } from "./events.js";
import { pointHasTool } from "./events.js";
import { MAX_SUBJECT_CHARS, withMatchBudget, type HookDef, type HookSet, type Source } from "./hooks.js";

export interface HookSources {
  policy: HookSet;
  service: HookSet;
  extension: HookSet;
  repository: HookSet;
}

export interface Selection {
  /** server `[hooks] enabled = false`: only policy hooks run */
  hooksEnabled: boolean;
  /** the tenant's `repository_hooks` */
  repositoryHooks: boolean;
}

/** `body`: the event, for matchers on a field of it (SessionStart's `source` …) and conditions. */
export function selectHooks(sources: HookSources, point: EventPoint, tool: string | undefined, sel: Selection, body: Record<string, unknown> = {}): HookDef[] {
  // One event's matchers together cost at most MAX_MATCH_WORK_PER_EVENT (hooks.ts).
  return withMatchBudget(() => select(sources, point, tool, sel, body));
}

function select(sources: HookSources, point: EventPoint, tool: string | undefined, sel: Selection, body: Record<string, unknown>): HookDef[] {
  const chosen: HookDef[] = [];
  const take = (source: Source, set: HookSet, on: boolean) => {
    if (!on) return;
    for (const hook of set.hooks) if (hook.point === point && matches(hook, point, tool, body)) chosen.push(hook);
  };
  take("policy", sources.policy, true); // policy cannot be switched off (copilot-hooks.md)
  take("service", sources.service, sel.hooksEnabled);
  take("extension", sources.extension, sel.hooksEnabled);
  // A repository's own disableAllHooks switches off its own hooks only: it cannot silence the operator's.
  take("repository", sources.repository, sel.hooksEnabled && sel.repositoryHooks && !sources.repository.disableAll);
  return chosen;
}

/** Each format decides what its matcher is tested against (HookDef.matchOn); the test is the format's matcher. */
function matches(hook: HookDef, point: EventPoint, tool: string | undefined, body: Record<string, unknown>): boolean {
  // A test that fails on what the event holds cannot say the hook is not for it: it runs (a guard is
  // never skipped, nor the event's other hooks with it, by what a body or a repository's rule holds).
  try {
    return tested(hook, point, tool, body);
  } catch {
    return true;
  }
}

function tested(hook: HookDef, point: EventPoint, tool: string | undefined, body: Record<string, unknown>): boolean {
  if (hook.condition && !hook.condition.test(body)) return false;
  if (!hook.matcher || hook.matchOn === "none") return true;
  let subject: unknown;
  if (hook.matchOn && "value" in hook.matchOn) subject = hook.matchOn.value;
  else if (hook.matchOn) {
    const value = body[hook.matchOn.field];
    subject = typeof value === "string" ? (hook.matchOn.basename ? lastPathPart(value) : value) : hook.matchOn.otherwise;
    // The field the matcher reads is not there (nor a word that stands for it): the matcher cannot
    // say the hook is not for this event — it runs, as on a tool event that names no tool.
    if (subject === undefined) return true;
  }
  else if (pointHasTool(point)) {
    // A tool event that names no tool: the matcher cannot say the hook is not for it — it runs (a
    // guard is never skipped by leaving the name out).
    if (typeof tool !== "string" || tool === "") return true;
    subject = tool;
  } else return true; // no tool, no field named: the matcher does not apply here
  if (typeof subject !== "string") return false;
  // Too long to test cheaply: run the hook rather than let padding skip a guard.
  if (subject.length > MAX_SUBJECT_CHARS) return true;
  return hook.matcher.test(subject);
}

/**
 * `src/a.ts` → `a.ts`; either separator, as the agent may run on Windows. The last path taken apart
 * is kept: an event's thousand hooks read one path, which is scanned once, not once a hook.
 */
let lastPart: { path: string; part: string } | undefined;
function lastPathPart(path: string): string {
  if (lastPart?.path !== path) lastPart = { path, part: path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1) };
  return lastPart.part;
}

/** Consecutive hooks of one source sharing a batch key run together; the rest one by one. */
export function planSteps(hooks: HookDef[]): HookDef[][] {
  const steps: HookDef[][] = [];
  for (const hook of hooks) {
    const last = steps[steps.length - 1];
    if (last && hook.batch !== undefined && last[0]!.batch === hook.batch && last[0]!.source === hook.source) last.push(hook);
    else steps.push([hook]);
  }
  return steps;
}
