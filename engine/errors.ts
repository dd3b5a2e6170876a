/**
 * @module The service's errors. A hook's deny is a result, not an error; these are for things that
 * stop hookbox itself from answering as asked. service/app.ts maps them to HTTP in one place.
 */

export class HookboxError extends Error {
  override readonly name: string = "HookboxError";
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A configuration file is wrong: names the file, the line and column where known, and what. */
export class ConfigError extends HookboxError {
  override readonly name = "ConfigError";
  constructor(
    readonly file: string,
    readonly detail: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${file}${line !== undefined ? `:${line}${column !== undefined ? `:${column}` : ""}` : ""}: ${detail}`, "config_invalid");
  }
}

/** The request cannot be understood; `field` names what is wrong in it. */
export class BadRequestError extends HookboxError {
  override readonly name = "BadRequestError";
  /** an event body refused after it was read: the event it names plainly, if any (its failure answer is that event's) */
  event?: string;
  constructor(message: string, readonly field?: string, code = "bad_request") {
    super(message, code);
  }
}

export class NotFoundError extends HookboxError {
  override readonly name = "NotFoundError";
  constructor(message: string) {
    super(message, "not_found");
  }
}

/** Too much work queued; the client should retry after `retryAfterS`. */
export class OverloadedError extends HookboxError {
  override readonly name = "OverloadedError";
  constructor(readonly retryAfterS: number, message = "too many hook runs queued; retry later") {
    super(message, "overloaded");
  }
}

/** No bearer token, or one that belongs to no tenant. */
export class UnauthorizedError extends HookboxError {
  override readonly name = "UnauthorizedError";
  constructor(message = "a valid bearer token is required") {
    super(message, "unauthorized");
  }
}

/** The service is stopping and takes no new work. */
export class ShuttingDownError extends HookboxError {
  override readonly name = "ShuttingDownError";
  constructor() {
    super("the service is shutting down", "shutting_down");
  }
}

/**
 * The client's deadline (a native endpoint's agent, or `Hookbox-Answer-By-Ms`) came before the
 * event was decided, and no hook finished so far decided as strongly as the failure mode would: the
 * client answers with the tenant's failure mode. The event goes on and is recorded — or, still
 * waiting for a run slot, is given up, recorded as such.
 */
export class NotDecidedInTimeError extends HookboxError {
  override readonly name = "NotDecidedInTimeError";
  constructor(readonly answerByMs: number) {
    super(`hookbox did not decide within ${answerByMs} ms (the agent's hook deadline is near); the event goes on and is recorded (one still waiting for a run slot is given up)`, "not_decided_in_time");
  }
}

/** The event waited for a slot past `[sandbox] max_event_ms`: no hook ran, nothing was decided. */
export class EventExpiredError extends HookboxError {
  override readonly name = "EventExpiredError";
  /** `record`: the event as it is kept (no hook ran, nothing decided), for the caller to record. */
  constructor(readonly maxEventMs: number, readonly record?: unknown) {
    super(`the event waited for a run slot past max_event_ms (${maxEventMs} ms): no hook ran`, "event_expired");
  }
}
