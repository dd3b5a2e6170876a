/**
 * @module Secrets out of traces: bearer tokens, values of `*_KEY` / `*_TOKEN` / `password`-like
 * fields (in JSON and in KEY=value text), and values that look like API keys, whatever field they
 * are in. Pure.
 */

const SECRET_NAME = /(^|[_-])(key|token|secret|password|passwd|pwd|credentials?|auth|authorization|api[_-]?key|private[_-]?key)$|^(password|passwd|secret|token|apikey|authorization)$/i;
const KEY_LIKE = [
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g, // OpenAI / Anthropic style
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[baprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, // JWT
];
export const REDACTED = "[redacted]";

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Redacts key-like values anywhere in a string. */
export function redactText(text: string): string {
  let out = text;
  for (const re of KEY_LIKE) out = out.replace(re, (m) => (m.startsWith("Bearer") ? `Bearer ${REDACTED}` : REDACTED));
  // KEY=value and "key": "value" where the name says secret
  out = out.replace(/\b([A-Za-z_][A-Za-z0-9_-]*)(\s*[=:]\s*)("?)([^\s"',;]+)\3/g, (m, name: string, sep: string, q: string, value: string) =>
    // "Authorization: Bearer …": the scheme stays, the token was redacted above.
    isSecretName(name) && !/^(Bearer|Basic|\[redacted\])$/.test(value) ? `${name}${sep}${q}${REDACTED}${q}` : m,
  );
  out = out.replace(/"([A-Za-z_][A-Za-z0-9_-]*)"(\s*:\s*)"((?:[^"\\]|\\.)*)"/g, (m, name: string, sep: string) =>
    isSecretName(name) ? `"${name}"${sep}"${REDACTED}"` : m,
  );
  return out;
}

/** Redacts a parsed JSON value: secret-named fields wholesale, key-like strings anywhere. */
export function redactValue(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isSecretName(k) ? REDACTED : redactValue(v)]));
  }
  return value;
}

export function redactEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, isSecretName(k) ? REDACTED : redactText(v)]));
}
