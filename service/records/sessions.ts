/**
 * @module When hookbox last heard from each agent session (SERVICE.md §8, "prove the guard is
 * wired"): per tenant, the last event and the last `hookbox doctor` canary of every session. Kept in
 * memory, at most `MAX_SESSIONS_PER_TENANT` per tenant (the least recently heard go first).
 */

/** @default 1000 sessions per tenant */
export const MAX_SESSIONS_PER_TENANT = 1000;

export interface SessionSeen {
  /** as traces keep it (redacted, capped at `SUMMARY_FIELD_BYTES`): the filter of `GET /v1/events` finds its events by it */
  session_id: string;
  /** ISO time of the last event or canary */
  last_seen: string;
  /** the event it last sent (canonical name) */
  last_event: string;
  /** the dialect its answers were last asked in (cosh, copilot, claude) */
  format: string | null;
  /** ISO time of the last canary (a `hookbox doctor` check), if any */
  last_canary: string | null;
  events: number;
}

/** How the list names the events that gave no session id (as `GET /v1/events?session_id=` it lists them). */
export const NO_SESSION_ID = "(no session id)";

export class Sessions {
  private readonly byTenant = new Map<string, Map<string, SessionSeen>>();

  /** `keptId`: the session id as the event's trace keeps it (`keptFields`) */
  heard(tenant: string, keptId: string | null, event: string, format: string | undefined, canary = false): void {
    const id = keptId === null || keptId === "" ? NO_SESSION_ID : keptId;
    let sessions = this.byTenant.get(tenant);
    if (!sessions) this.byTenant.set(tenant, (sessions = new Map()));
    const now = new Date().toISOString();
    const seen = sessions.get(id) ?? { session_id: id, last_seen: now, last_event: event, format: null, last_canary: null, events: 0 };
    // Map order is insertion order: delete and set again keeps the most recent last.
    sessions.delete(id);
    // A canary says the session's line is live, never what it last sent or in which dialect.
    sessions.set(id, canary ? { ...seen, last_seen: now, last_canary: now } : { ...seen, last_seen: now, last_event: event, format: format ?? seen.format, events: seen.events + 1 });
    if (sessions.size > MAX_SESSIONS_PER_TENANT) sessions.delete(sessions.keys().next().value!);
  }

  /** Most recently heard first: every one kept (at most MAX_SESSIONS_PER_TENANT) unless `limit` says fewer. */
  list(tenant: string, limit = MAX_SESSIONS_PER_TENANT): SessionSeen[] {
    return [...(this.byTenant.get(tenant)?.values() ?? [])].reverse().slice(0, limit);
  }
}
