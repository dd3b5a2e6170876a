/**
 * @module Which hooks an event runs, in which order (SERVICE.md §2): policy → service → extension
 * → repository, each in its configuration order, matchers applied. Pure.
 */
import type { EventPoint } from "./events.js";
import { pointHasTool } from "./events.js";
import type { HookDef, HookSet, Source } from "./hooks.js";

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

export function selectHooks(sources: HookSources, point: EventPoint, tool: string | undefined, sel: Selection): HookDef[] {
  const chosen: HookDef[] = [];
  const take = (source: Source, set: HookSet, on: boolean) => {
    if (!on) return;
    for (const hook of set.hooks) if (hook.point === point && matches(hook, point, tool)) chosen.push(hook);
  };
  take("policy", sources.policy, true); // policy cannot be switched off (copilot-hooks.md)
  take("service", sources.service, sel.hooksEnabled);
  take("extension", sources.extension, sel.hooksEnabled);
  // A repository's own disableAllHooks switches off its own hooks only: it cannot silence the operator's.
  take("repository", sources.repository, sel.hooksEnabled && sel.repositoryHooks && !sources.repository.disableAll);
  return chosen;
}

function matches(hook: HookDef, point: EventPoint, tool: string | undefined): boolean {
  if (!hook.matcher || !pointHasTool(point)) return true;
  return tool !== undefined && hook.matcher.test(tool);
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
