/**
 * @module Folding hook verdicts into one decision (SERVICE.md §4, cosh-hooks.md "Execution Model").
 * Pure.
 */
import { createHash } from "node:crypto";
import type { Decision } from "./events.js";
import { effectiveDecisions } from "./formats/registry.js";
import { blockKeepsGoing, cardName, fromRepository, hookCalled, repositoryWords } from "./formats/shared.js";
import type { HookDef } from "./hooks.js";
import { MAX_TOOL_NAMES, type ToolSelection, type Verdict } from "./verdict.js";

export interface Judged {
  hook: HookDef;
  verdict: Verdict;
}

/** cosh-hooks.md: block wins (short-circuit); otherwise ask beats allow beats pass-through. */
export const RANK: Record<Decision, number> = { block: 3, ask: 2, allow: 1 };

/** Whether a hook's decision counts where it was made, and its tier lets it. */
export function isEffective(j: Judged): boolean {
  return j.verdict.decision !== null && !j.verdict.distrusted && effectiveDecisions(j.hook.point, j.hook.format).has(j.verdict.decision);
}

/**
 * Whether a block from a hook of `source` counts at `point`: everywhere, but a repository hook's at
 * Claude Code's ConfigChange — there a block keeps a settings change from applying, the user's new
 * deny rule as much as anything, so it can keep looser settings in force: no tightening. Nor, there,
 * does the hook's not deciding count, which the tenant's failure mode would make a block.
 */
export function blockCounts(source: HookDef["source"], point: HookDef["point"]): boolean {
  return source !== "repository" || point !== "ConfigChange";
}

/**
 * Trust tiers (SERVICE.md §8): policy > service and extension > repository. Untrusted code can only
 * tighten: a repository hook's `allow` is recorded but does not count (nor its block of a settings
 * change, which can keep looser settings), and its argument changes are
 * dropped unless its tenant trusts them (`repository_may_rewrite`), and so are its replacements of a
 * tool's output; the tools it leaves Gemini's model only narrow (no forced call). Block, ask and context count.
 */
export function applyTrust(verdict: Verdict, source: HookDef["source"], opts: { repositoryMayRewrite: boolean; point?: HookDef["point"] }): Verdict {
  if (source !== "repository") return verdict;
  const out = { ...verdict };
  if (out.decision === "allow") {
    out.distrusted = "trust: a repository hook's allow does not count (untrusted code can only tighten)";
    out.rule = `${out.rule}; ${out.distrusted}`;
  }
  if (out.decision === "block" && opts.point !== undefined && !blockCounts(source, opts.point)) {
    out.distrusted = "trust: a repository hook's block of a settings change does not count (it could keep looser settings in force)";
    out.rule = `${out.rule}; ${out.distrusted}`;
  }
  if (out.modifiedArgs !== undefined && !opts.repositoryMayRewrite) {
    delete out.modifiedArgs;
    out.rule = `${out.rule}; trust: a repository hook's argument change is ignored (repository_may_rewrite = false)`;
  }
  if (out.updatedOutput !== undefined && !opts.repositoryMayRewrite) {
    delete out.updatedOutput;
    out.rule = `${out.rule}; trust: a repository hook's replacement of the tool's output is ignored (repository_may_rewrite = false)`;
  }
  // Gemini's BeforeToolSelection: a repository may leave the model fewer tools, or none — never replace
  // Gemini's own setting with one that names no tools and forbids none (Gemini takes a hook's
  // toolConfig in place of the request's), nor force a call with any tool at all (ANY with no list).
  // Its ANY with a list stays: the Gemini API takes allowedFunctionNames with ANY only.
  if (out.toolSelection !== undefined && out.toolSelection.mode !== "NONE" && out.toolSelection.names === undefined) {
    delete out.toolSelection;
    out.rule = `${out.rule}; trust: a repository hook's toolConfig that names no tools and forbids none does not count (it narrows nothing)`;
  }
  return out;
}

export interface Notification {
  type: "stream_event";
  event: { subtype: "hook_notification"; hook_name: string; message: string; decision?: Decision };
}

/**
 * cosh-hooks.md "Notifications": one per hook with a systemMessage, else a reason. Its card shows the
 * hook's decision only where that decision counts: a repository's allow, or a block where blocks
 * decide nothing, is no "allow" or "block" card the user would take for what happened.
 */
export function notificationOf(j: Judged): Notification | undefined {
  const message = j.verdict.systemMessage ?? j.verdict.reason ?? j.verdict.warning;
  if (!message) return undefined;
  return {
    type: "stream_event",
    event: { subtype: "hook_notification", hook_name: cardName(j.hook), message, ...(j.verdict.decision && isEffective(j) ? { decision: j.verdict.decision } : {}) },
  };
}

/**
 * @default 64 KiB — all of one event's hook messages together, in each of: the joined user message,
 * the joined context, the notifications. Each hook's message is capped (16 KiB), but an event may run
 * a thousand hooks: uncapped, one answer would carry megabytes several times over.
 */
export const MAX_EVENT_MESSAGE_CHARS = 64 * 1024;

/** Hands out one event's notifications, in order, until their messages reach MAX_EVENT_MESSAGE_CHARS; counts the rest. */
export class MessageBudget {
  private left = MAX_EVENT_MESSAGE_CHARS;
  dropped = 0;
  take(n: Notification | undefined): Notification | undefined {
    if (!n) return undefined;
    if (n.event.message.length > this.left) {
      this.left = 0;
      this.dropped++;
      return undefined;
    }
    this.left -= n.event.message.length;
    return n;
  }
  /** The closing notification saying how many were left out, if any were. */
  closing(): Notification | undefined {
    if (this.dropped === 0) return undefined;
    return { type: "stream_event", event: { subtype: "hook_notification", hook_name: "hookbox", message: `${this.dropped} more hook notification(s) left out: an event's messages are capped at ${MAX_EVENT_MESSAGE_CHARS} characters` } };
  }
}

/** A hook's text, and whether a repository's hook said it. */
type Said = { text: string; repository: boolean };

/**
 * `texts` joined by newlines, at most MAX_EVENT_MESSAGE_CHARS of them; the rest counted in a last
 * line. A repository's text is marked as such (`fromRepository`) — only one that still fits, its
 * bare length tried first: a thousand hooks' texts past the cap cost no marking.
 */
function joinCapped(texts: Said[]): string | undefined {
  if (texts.length === 0) return undefined;
  let out = "";
  for (const [i, said] of texts.entries()) {
    // (a mark only lengthens a text: one whose bare length does not fit never will)
    const t = out.length + said.text.length + 1 > MAX_EVENT_MESSAGE_CHARS ? undefined : said.repository ? fromRepository(said.text) : said.text;
    if (t === undefined || out.length + t.length + 1 > MAX_EVENT_MESSAGE_CHARS) return `${out}\n… ${texts.length - i} more left out (an event's messages are capped at ${MAX_EVENT_MESSAGE_CHARS} characters)`;
    out = i === 0 ? t : `${out}\n${t}`;
  }
  return out;
}

/**
 * The texts the hooks said, in order, each once for each kind of teller (a repository's beside
 * another's of the same words stays). A long text is known by its digest: V8 hashes a string of
 * more than 16,383 characters by its length alone, and a thousand hooks' messages of one length,
 * told apart only at their ends, made a set of them compare each with every other — a second and
 * more of the loop that serves everyone.
 */
function saidOnce(judged: Judged[], text: (j: Judged) => string | undefined): Said[] {
  // texts as they are, and long ones' digests, apart: for a repository's hooks and for the others'
  const seen = [new Set<string>(), new Set<string>(), new Set<string>(), new Set<string>()];
  const out: Said[] = [];
  for (const j of judged) {
    const t = text(j);
    if (!t) continue;
    const repository = j.hook.source === "repository";
    const long = t.length > DIGESTED_CHARS;
    const mine = seen[(repository ? 2 : 0) + (long ? 1 : 0)]!;
    const key = long ? createHash("sha256").update(t).digest("base64") : t;
    if (mine.has(key)) continue;
    mine.add(key);
    out.push({ text: t, repository });
  }
  return out;
}

/** Texts longer than this are told apart by their digest (saidOnce). */
const DIGESTED_CHARS = 1024;

export interface Folded {
  decision: Decision | null;
  /** the deciding hook's reason */
  reason?: string;
  /** every hook's message for the user (systemMessage, else a warning), in order, joined by newlines */
  systemMessage?: string;
  additionalContext?: string;
  modifiedArgs?: unknown;
  /** what the model sees in place of the tool's output (PostToolUse): the last hook's replacement */
  updatedOutput?: unknown;
  /** a hook stopped the agent altogether (`continue: false`): the first such hook's stop reason */
  halt?: string;
  /** a hook deferred to the agent's own permission flow (Claude Code's `defer`): no allow goes out, the second look's neither */
  deferred?: true;
  notifications: Notification[];
  /** why the decision is what it is, when a service rule (not a hook) changed it */
  note?: string;
  /** which tools the model may call next (foldToolSelection), when a hook said */
  toolSelection?: ToolSelection;
}

/** Trust tiers (SERVICE.md §8) as lists of tools are folded: each tier's list only narrows the ones above it. */
const TOOL_TIER: Record<HookDef["source"], number> = { policy: 0, service: 1, extension: 1, repository: 2 };

/**
 * The tools the model may call, from every hook's toolSelection (Gemini CLI hooks reference,
 * BeforeToolSelection; its aggregator's rules): NONE from any hook is NONE ("wins over other hooks"),
 * else ANY from any is ANY, else AUTO. The names: within a tier, the union of its hooks' lists, as
 * Gemini CLI combines them ("multiple hooks' whitelists are combined"); across tiers, their
 * intersection — a lower tier's list never adds a tool a higher tier's left out (untrusted code can
 * only tighten, SERVICE.md §8). Tiers that named tools and share none leave the model none: NONE
 * (an empty list would read as no list: any tool). Sorted, as Gemini CLI writes them, and cut at
 * MAX_TOOL_NAMES (a shorter list only allows less). Undefined when no hook said.
 */
export function foldToolSelection(judged: Judged[]): ToolSelection | undefined {
  const said = judged.filter((j) => j.verdict.toolSelection !== undefined);
  if (said.length === 0) return undefined;
  const modes = new Set(said.map((j) => j.verdict.toolSelection!.mode));
  if (modes.has("NONE")) return { mode: "NONE", names: [] };
  const mode = modes.has("ANY") ? "ANY" : "AUTO";
  const tiers = new Map<number, Set<string>>();
  for (const j of said) {
    const names = j.verdict.toolSelection!.names;
    if (names === undefined) continue;
    const tier = TOOL_TIER[j.hook.source];
    const union = tiers.get(tier) ?? new Set<string>();
    // Past MAX_TOOL_NAMES a tier's list is cut as it is joined (a shorter list only allows less):
    // no name past it is even looked at, however many hooks of the tier say more.
    for (const n of names) {
      if (union.size >= MAX_TOOL_NAMES) break;
      union.add(n);
    }
    tiers.set(tier, union);
  }
  if (tiers.size === 0) return { mode };
  const [first, ...rest] = [...tiers.values()];
  const names = [...first!].filter((n) => rest.every((t) => t.has(n))).sort().slice(0, MAX_TOOL_NAMES);
  return names.length === 0 ? { mode: "NONE", names: [] } : { mode, names };
}

/** A reason that says something; a blank one is none. */
const said = (reason: string | undefined) => (reason !== undefined && reason.trim() !== "" ? reason : undefined);

/** `text` as the answer says it: a repository hook's marked as its own (fromRepository), any other's as written. */
function ownWords(j: Judged | undefined, text: string | undefined): string | undefined {
  return text !== undefined && j?.hook.source === "repository" ? repositoryWords(text) : text;
}

/** What a block or an ask without a reason of its own says. */
function defaultReason(winner: Judged | undefined): string | undefined {
  if (winner?.verdict.decision === "block") return `blocked by ${hookCalled(winner.hook)}`;
  if (winner?.verdict.decision === "ask") return `${hookCalled(winner.hook)} asks for confirmation`;
  return undefined;
}



export function fold(judged: Judged[], opts: { interactive: boolean }): Folded {
  let winner: Judged | undefined;
  for (const j of judged) {
    if (!isEffective(j)) continue;
    if (!winner || RANK[j.verdict.decision!] > RANK[winner.verdict.decision!]) winner = j;
  }
  const contexts: Said[] = judged.flatMap((j) => (j.verdict.additionalContext ? [{ text: j.verdict.additionalContext, repository: j.hook.source === "repository" }] : []));
  // Every hook's message reaches the agent, not only the deciding hook's (advice, warnings).
  const messages = saidOnce(judged, (j) => j.verdict.systemMessage ?? j.verdict.warning);
  const budget = new MessageBudget();
  const notifications = judged.map((j) => budget.take(notificationOf(j))).filter((n): n is Notification => n !== undefined);
  const closing = budget.closing();
  if (closing) notifications.push(closing);
  // Arguments rewritten by a hook that allowed (or made no decision); a block discards them.
  // (A repository hook's rewrite is gone already, unless its tenant trusts it: applyTrust.)
  const modified = judged.filter((j) => j.verdict.modifiedArgs !== undefined && j.verdict.decision !== "block").at(-1);
  const folded: Folded = {
    decision: winner?.verdict.decision ?? null,
    // A block always says why: Codex and Claude Code refuse a Stop or prompt block without a reason,
    // and Cursor's stop block is its follow-up message.
    // A repository's words marked as its own wherever they are said (fromRepository): the reason is
    // what the model acts on and what the user's prompt shows — "org-guard (policy): pre-approved …"
    // from a repository must read as the repository's.
    reason: ownWords(winner, said(winner?.verdict.reason)) ?? defaultReason(winner),
    systemMessage: joinCapped(messages),
    additionalContext: joinCapped(contexts),
    notifications,
  };
  const tools = foldToolSelection(judged);
  if (tools) folded.toolSelection = tools;
  // A replaced tool output stands with a block too (Claude Code: a block "can be combined" with it):
  // the last hook's replacement, each hook having seen the output as the tool gave it.
  const replaced = judged.filter((j) => j.verdict.updatedOutput !== undefined).at(-1);
  if (replaced) folded.updatedOutput = replaced.verdict.updatedOutput;
  if (modified && folded.decision !== "block") {
    folded.modifiedArgs = modified.verdict.modifiedArgs;
    // An allow is for the arguments its hook saw: only the changing hook's own allow goes out with
    // its change (the policy hooks' second look may allow the changed event anew).
    // A repository hook's allow counts for nothing (applyTrust), its change may (repository_may_rewrite).
    if (folded.decision === "allow" && !(isEffective(modified) && modified.verdict.decision === "allow")) {
      folded.decision = null;
      delete folded.reason;
      folded.note = `${hookCalled(winner!.hook)} allowed the arguments as sent; ${hookCalled(modified.hook)} changed them, so that allow does not carry over`;
    }
  }
  // Claude Code: "deny > defer > ask > allow" — a hook that deferred to the agent's own permission
  // flow keeps another hook's allow from skipping it (a repository's too: that only tightens).
  const deferred = judged.find((j) => j.verdict.deferred);
  if (deferred) folded.deferred = true;
  const deferring = folded.decision === "allow" ? deferred : undefined;
  if (deferring) {
    folded.decision = null;
    delete folded.reason;
    folded.note = `${hookCalled(deferring.hook)} deferred to the agent's own permission flow, which outranks an allow (Claude Code: deny > defer > ask > allow)`;
  }
  // Claude Code: `continue: false` "takes precedence over any event-specific decision fields". A
  // block where one keeps the agent going (blockKeepsGoing) would: the stop outranks it (haltVerdict).
  const halting = judged.find((j) => j.verdict.halt !== undefined);
  if (halting) {
    folded.halt = ownWords(halting, halting.verdict.halt);
    delete folded.modifiedArgs;
    if (blockKeepsGoing(halting.hook.point) && folded.decision !== null) {
      folded.decision = null;
      delete folded.reason;
      folded.note = `${hookCalled(halting.hook)} stopped the agent (continue: false), which outranks a decision that would keep it going`;
    }
  }
  // copilot-hooks.md: "ask needs an interactive approval flow … where no prompt is shown, it is treated as a deny"
  if (folded.decision === "ask" && !opts.interactive) {
    folded.decision = "block";
    folded.reason ??= `${hookCalled(winner!.hook)} asked for confirmation and no one can answer`;
    folded.note = "ask is a block when no one can answer (interactive=false)";
  }
  return folded;
}

/**
 * The fold of an event whose arguments a hook changed, after the policy hooks' look at the changed
 * event (SERVICE.md §8). `again`: their fold (undefined when there are none); `unchecked`: one of
 * them did not run to a normal end, or the request went away.
 * - a policy block blocks, and the change goes with it; a policy ask asks about the changed event,
 *   so the change stays with the question;
 * - unchecked, or changed by a policy hook in turn (looked at by no policy hook): the change cannot
 *   go out, and neither may the call as sent, which a hook this tier trusts changed — where a block
 *   stops the call (`onLost` "block"), the call is blocked; elsewhere the change is dropped, and with
 *   it an allow, which only ever goes out with the change it was given for (see `fold`);
 * - a policy allow of the changed event allows it when nothing else decided.
 * Every message and context of both looks reaches the agent.
 */
export function afterPolicyLook(first: Folded, again: Folded | undefined, unchecked: boolean, changedInTurn: boolean, onLost: "block" | "drop"): Folded {
  const out = lookedAt(first, again, unchecked, changedInTurn || (again?.modifiedArgs !== undefined && !sameJson(again.modifiedArgs, first.modifiedArgs)), onLost);
  // A policy hook that stopped the agent (`continue: false`) at the second look stops it: the change
  // goes nowhere, whatever else was decided.
  if (again?.halt !== undefined) {
    out.halt ??= again.halt;
    if (out.modifiedArgs !== undefined) return withoutChange(out, `${out.note ?? "a hook changed the arguments"}; a policy hook stopped the agent at the changed event: the change is dropped`);
  }
  return out;
}

function lookedAt(first: Folded, again: Folded | undefined, unchecked: boolean, changedInTurn: boolean, onLost: "block" | "drop"): Folded {
  // The policy hooks speak in both looks: what they said twice is said once. The second look's
  // first: the first look's text may be a repository's, up to the cap, which must not push out
  // what the policy hooks said of the changed event.
  // (lines of texts already joined, a repository's marked already)
  const both = (a: string | undefined, b: string | undefined) => joinCapped([...new Set([b, a].filter((t): t is string => !!t).flatMap((t) => t.split("\n")))].map((text) => ({ text, repository: false })));
  const merged = (f: Folded): Folded => {
    const seen = new Set(first.notifications.map((n) => JSON.stringify(n)));
    const out: Folded = { ...f, notifications: [...first.notifications, ...(again?.notifications ?? []).filter((n) => !seen.has(JSON.stringify(n)))] };
    const systemMessage = both(first.systemMessage, again?.systemMessage);
    const additionalContext = both(first.additionalContext, again?.additionalContext);
    if (systemMessage !== undefined) out.systemMessage = systemMessage;
    if (additionalContext !== undefined) out.additionalContext = additionalContext;
    return out;
  };
  // A change that cannot go out as the policy hooks checked it: a slow or failing guard (or a
  // repository hook that used up max_event_ms) must not turn an operator's wrapper back into the
  // call as sent — the call is blocked where a block stops it.
  const lost = again?.decision === "block" ? undefined
    : unchecked ? "the policy hooks could not check the changed event"
      : changedInTurn ? "the policy hooks changed the changed event in turn — a change no policy hook has looked at" : undefined;
  if (lost !== undefined && onLost === "block") return merged(changeLost(first, lost));
  if (again && (again.decision === "block" || again.decision === "ask")) {
    const blocked = again.decision === "block";
    // (fold gives every block and ask a reason)
    const out = merged({
      ...again,
      note: `a hook changed the arguments; the policy hooks ${blocked ? "blocked" : "asked about"} the changed event`,
    });
    delete out.modifiedArgs;
    // The question is about the change only when the policy hooks checked it as it is: one they could
    // not check, or changed in turn, is asked about without it (the agent asks about its own call).
    if (!blocked && !unchecked && !changedInTurn) out.modifiedArgs = first.modifiedArgs;
    else if (!blocked) out.note = `${out.note}; the change ${unchecked ? "could not be checked" : "was changed in turn by a policy hook"}: asked without it`;
    if (first.halt !== undefined && out.halt === undefined) out.halt = first.halt;
    // The tool has run: its output, as a hook of the first look replaced it, is what the model sees
    // whatever the policy hooks say of the changed arguments.
    if (first.updatedOutput !== undefined && out.updatedOutput === undefined) out.updatedOutput = first.updatedOutput;
    return out;
  }
  if (unchecked) return merged(withoutChange(first, "a hook changed the arguments, but the policy hooks could not check the changed event: the change is dropped"));
  // The policy hooks changed the changed event in turn (wrapped it, say; saying again what they were
  // shown is no change — a wrapper that always prints its wrapping, say): no policy hook has looked
  // at that change, so it never goes out — and the change it was made of goes too, with the allow
  // given with it. (A policy hook that rewrites leaves its own rewrite as it is on a second look:
  // then its first change passes.)
  if (changedInTurn) return merged(withoutChange(first, "a hook changed the arguments, and the policy hooks changed the changed event in turn — a change no policy hook has looked at: both are dropped"));
  // (a hook that deferred to the agent's own permission flow outranks this allow too, as the first look's)
  if (again?.decision === "allow" && first.decision === null && !first.deferred) {
    return merged({ ...first, decision: "allow", ...(again.reason !== undefined ? { reason: again.reason } : {}), note: "a hook changed the arguments; the policy hooks allowed the changed event" });
  }
  return again ? merged(first) : first;
}

/**
 * Whether two JSON values say the same: the same keys and values, in any key order, whatever their
 * objects' prototypes (a deep merge makes objects of none). Arguments are at most 64 levels deep.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((v, i) => sameJson(v, (b as unknown[])[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * `f` whose change of the arguments cannot go out (`lost` says why), where a block stops the call:
 * blocked — run neither as changed nor as sent, the call as sent being what a hook hookbox trusts
 * wanted changed (an operator's wrapper round a command).
 */
export function changeLost(f: Folded, lost: string): Folded {
  const { modifiedArgs: _dropped, ...rest } = f;
  return {
    ...rest,
    decision: "block",
    reason: `a hook changed the arguments, and ${lost}: the call is blocked, run neither as changed nor as sent`,
    note: `a hook changed the arguments, but ${lost}: the change is dropped, and the call blocked rather than run as sent`,
  };
}

/**
 * `f` without its changed arguments, and without the allow given with them (fold keeps no other
 * allow next to a change). `note` says why.
 */
export function withoutChange(f: Folded, note: string): Folded {
  const { modifiedArgs: _dropped, ...rest } = f;
  const out: Folded = { ...rest, note };
  if (out.decision === "allow") {
    out.decision = null;
    delete out.reason;
    out.note += ", and the allow given with it";
  }
  return out;
}
