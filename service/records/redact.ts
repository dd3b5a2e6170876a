/**
 * @module Secrets out of what hookbox keeps: bearer tokens, cookies, passwords in URLs and command
 * lines, values of `*_KEY` / `*_TOKEN` / `password`-like fields (in JSON, at any depth of JSON in JSON
 * strings, and in KEY=value text), and values that look like API keys,
 * whatever field they are in. Every pattern runs on re2js (linear time: a hook's or a tenant's text
 * cannot make it backtrack), and only ever over capped text: `keep` cuts before it redacts. Pure.
 */
import { RE2JS } from "re2js";
import { cutsWord, detached, headBytes, withoutCutWord } from "../../engine/detached.js";

export { headBytes };

export const REDACTED = "[redacted]";
/** Room past a cap that is redacted too, so a secret straddling the cut is still recognised. */
export const REDACT_MARGIN_CHARS = 512;

/**
 * A secret's name, snake, kebab, dotted, spaced or camel case (`clientSecret`, `DB_PASS`,
 * `PGPASSWORD`, `spring.datasource.password`, `APIToken`, `GITHUB_TOKEN_2`): an unmistakable secret
 * word anywhere in it, `pass` or `pwd` as a word of it, or a key-like word at its end (a number may
 * follow). Names are tested with each camel step split (`accessToken` as `access_Token`, `SSHKey` as
 * `SSH_Key`).
 */
const SECRET_NAME = RE2JS.compile(
  String.raw`password|passwd|passphrase|secret|credential|private[_.\s-]?key|api[_.\s-]?key|access[_.\s-]?key` +
    String.raw`|(^|[_.\s-])(pass|pwd)[0-9]*([_.\s-]|$)` +
    String.raw`|(^|[_.\s-])(key|token|auth|authorization|cookie|signature)[_.\s-]?[0-9]*$`,
  RE2JS.CASE_INSENSITIVE,
);
/** A word every secret's name holds (fixed literals only: a linear scan): most names are passed on this alone. */
const SECRET_WORDS = "pass|pwd|secret|credential|key|token|auth|cookie|signature";
const SECRET_WORD = new RegExp(SECRET_WORDS, "i");
/** The cap on a name tested: a name is tested by its first and last characters this many. */
const NAME_TESTED_CHARS = 128;
/** camelCase to snake at each lower-to-upper step: `accessToken` → `access_Token` (linear). */
const CAMEL_STEP = /([a-z0-9])([A-Z])/g;
/** …and where an acronym ends: `SSHKey` → `SSH_Key` (linear). */
const ACRONYM_STEP = /([A-Z])([A-Z][a-z])/g;
/**
 * What may stand right before a key with no word boundary between: a JSON escape that ends in a
 * letter or digit (`\n`, `\t`, `\u0041` …) — in a hook's raw output `"x:\nghp_…"` has an `n`
 * before the key, and the key would pass as text — or a terminal's colour code, raw or escaped
 * (`ESC[1m`, `\u001b[1m`).
 */
const ESCAPE_BEFORE = String.raw`\\[nrtbf]|\\u[0-9A-Fa-f]{4}(?:\[[0-9;]*m)?|\x1b\[[0-9;]*m`;
/** A key's start: a word boundary, or ESCAPE_BEFORE as group 1, kept in the text. */
const keyStart = (pattern: string) => String.raw`(?:(${ESCAPE_BEFORE})|\b)` + pattern.replace(/^\\b/, "");
/**
 * Each with the literal every match starts with: a pattern runs only over text that holds its
 * literal (a plain substring search, or a regex of alternative literals), which is most of what is
 * kept — names, outcomes, short outputs — never. `scheme`: group 1, up to the scheme word, stays
 * (`Bearer [redacted]`); each starts at a word's start or right after ESCAPE_BEFORE.
 */
const KEY_LIKE: { literal: string | RegExp; re: RE2JS; scheme?: boolean }[] = (
  [
    // "Authorization: Basic …", "authorization: token …", "Proxy-Authorization: Digest …": the scheme stays
    [/authorization/i, String.raw`(?i)((?:${ESCAPE_BEFORE}|\b)authorization["']?\s*[:=]\s*["']?[A-Za-z]+)\s+[^\s"',;]{4,}`, true],
    [/bearer/i, String.raw`(?i)((?:${ESCAPE_BEFORE}|\b)Bearer)\s+[A-Za-z0-9._~+/=-]{8,}`, true],
    ["sk-", String.raw`\bsk-[A-Za-z0-9_-]{16,}`], // OpenAI / Anthropic style
    [/[rs]k_(live|test)_/, String.raw`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`], // Stripe secret and restricted keys
    ["glpat-", String.raw`\bglpat-[A-Za-z0-9_-]{20,}`], // GitLab
    ["npm_", String.raw`\bnpm_[A-Za-z0-9]{36,}`],
    ["hf_", String.raw`\bhf_[A-Za-z0-9]{30,}`], // Hugging Face
    [/gh[pousr]_/, String.raw`\bgh[pousr]_[A-Za-z0-9]{20,}`],
    ["github_pat_", String.raw`\bgithub_pat_[A-Za-z0-9_]{20,}`],
    ["AKIA", String.raw`\bAKIA[0-9A-Z]{16}\b`],
    ["xox", String.raw`\bxox[baprs]-[A-Za-z0-9-]{10,}`],
    ["xapp-", String.raw`\bxapp-[A-Za-z0-9-]{10,}`], // Slack app-level
    ["AIza", String.raw`\bAIza[0-9A-Za-z_-]{30,}`],
    ["eyJ", String.raw`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`], // JWT
  ] as [string | RegExp, string, boolean?][]
).map(([literal, p, scheme]) => ({ literal, re: RE2JS.compile(scheme ? p : keyStart(p)), scheme }));
/** A private key in PEM (or an armoured PGP one), to its END line or, cut, to the end of the text. */
const PEM = RE2JS.compile(String.raw`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`);
/**
 * A password in a URL: `postgres://user:password@host`, `redis://:password@host` (no user) — the
 * user stays; the password runs to the last `@` (it may hold `@` and `/`).
 */
const URL_PASSWORD = RE2JS.compile(String.raw`\b([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@"']*:)[^\s"']*@`);
/**
 * A `Cookie:` or `Set-Cookie:` header: its whole value, to the end of its line (every cookie in it,
 * and a set one's attributes), as the header name is written in HTTP (the colon right after it).
 */
const COOKIE_HEADER = RE2JS.compile(String.raw`(?i)(\bcookie:[ \t]*)[^\s][^\r\n]*`);
/** A JSON escape that breaks a line (`\n`, `\r`, `\t`): in a hook's raw JSON output, where a command or an option may start. */
const LINE_ESCAPE = String.raw`\\[nrt]`;
/**
 * A secret's quoted word after its option or client, as a command line and a hook's raw JSON output
 * hold it: in escaped quotes (`\"a b\"`), double or single quotes; to its closing quote or, cut
 * before it, the text's end — never a quote that is JSON's own, ending the string the command is in
 * (`"mysql -p"}`, `-p" ,`, `-p\"}`: `-p` alone prompts).
 */
const QUOTED_SECRET = String.raw`\\"[^"\\\s,:}\]](?:[^"\\\r\n]|\\[^"\r\n])*(?:\\"|$)|"[^"\s,:}\]][^"\r\n]*(?:"|$)|'[^'\r\n]*(?:'|$)`;
/** …unquoted, glued to `-p` or its next word: never from a backslash (an escaped quote of JSON in JSON is no secret's start), and to a `\n` escape at most. */
const GLUED_SECRET = String.raw`[^\s"';&|\\](?:[^\s"';&|\\]|\\[^nrt"\s\\])*`;
/** Where a command word starts — a line, `;`, `&`, `|`, `(`, a JSON string's quote or a LINE_ESCAPE — with the directory it may be run from. */
const COMMAND_START = String.raw`(?:^|[\s;&|("]|${LINE_ESCAPE})(?:[^\s;&|()"]*/)?`;
/** The rest of a command after its name, lazily: not past `;`, `&`, `|`, a line's end or a `\n` escape. */
const IN_COMMAND = String.raw`(?:\s(?:[^;&|\r\n\\]|\\[^nrt\r\n])*?)?`;
/**
 * A secret given as a command-line option's next word: `--password hunter2`, `--api-key x`,
 * `--password "a b"`; the option at a word's start, a JSON string's or after a LINE_ESCAPE.
 */
const SECRET_OPTION = RE2JS.compile(String.raw`(?i)((?:^|\s|"|${LINE_ESCAPE})--?[a-z0-9-]*(?:password|passwd|passphrase|secret|token|api-?key))(\s+)(${QUOTED_SECRET}|[^\s"'\\-][^\s"']*)`);
/**
 * A user and password given as one option's word — `--user admin:hunter2`, `--proxy-user=a:b`, and
 * after curl `-u admin:hunter2` or `-uadmin:hunter2` (`-u` is another option of sort, git, python) —
 * the user stays; quoted, the password runs to the closing quote.
 */
const USER_OPTION_AT = { user: String.raw`(?:^|\s)--(?:proxy-)?user(?:\s+|=)`, curl: String.raw`\bcurl\b[^\r\n]*?\s-[uU]\s*` };
const USER_WORD = [String.raw`"[^":]*:)[^"]*`, String.raw`'[^':]*:)[^']*`, String.raw`[^\s:"']+:)[^\s"']+`];
/**
 * Six patterns — each place (`--user`, curl's `-u`) with each form of its word — applied one after
 * the other, never as alternatives of one: RE2 reports a match of a later alternative only once
 * every earlier one has failed, and an earlier one's `curl …?` runs on to the end of the line, so
 * each match cost the rest of the line (`curl -u a:b ` × 5,000 took 72 s). Alone, each search
 * stops at its match: linear in the text.
 */
const USER_OPTIONS = {
  user: USER_WORD.map((word) => RE2JS.compile(`(${USER_OPTION_AT.user}${word}`)),
  curl: USER_WORD.map((word) => RE2JS.compile(`(${USER_OPTION_AT.curl}${word}`)),
};
/** Fixed literals only (no quantifier): a linear scan in any engine. */
const holds = (text: string, literal: string | RegExp) => (typeof literal === "string" ? text.includes(literal) : literal.test(text));
/**
 * `KEY=value`, `KEY: value` where the name holds a word of a secret's name: the name and its
 * separator (spaces and tabs around it, never a line break). Only the name and the separator are
 * taken, and only names that may be a secret's: a value is read, and passed over, only after a
 * secret's name, so a value never hides the assignment inside it (`Error: API_KEY=x`, `a=b&token=x`,
 * `https://host/?api_key=x`, a YAML parent line), and text of other names costs no match at all.
 */
const ASSIGNMENT = RE2JS.compile(
  String.raw`\b((?:[A-Za-z_][A-Za-z0-9_-]*)?(?i:${SECRET_WORDS})[A-Za-z0-9_-]*)('?[ \t]*(?:=>|[=:])[ \t]*)`,
);
/**
 * `<password>hunter2</password>`: an element named like a secret, its attributes kept (group 2:
 * `<password type="x">`), its text on one line, closed by its own tag (checked in code: RE2 has no
 * backreference) — never a generic type (`Promise<Token>`).
 */
const XML_ELEMENT = RE2JS.compile(String.raw`<((?:[A-Za-z_][A-Za-z0-9_.-]*)?(?i:${SECRET_WORDS})[A-Za-z0-9_.-]*)((?:\s[^<>\r\n]*)?)>([^<\r\n]*)</([A-Za-z_][A-Za-z0-9_.-]*)>`);
/**
 * …and one whose text runs to a cut (`<password>a b…`, `<password>a b…[truncated 9 bytes]"`, or
 * `<password>a b` at the end of a text cut there): redacted to it. At a line's start or after a
 * blank, a tag, a quote, a parenthesis or a JSON escape (group 1), never after a word (a generic
 * type, `Promise<Token>…`); attributes as group 3; the cut's mark, `…`, as group 4 — none where the
 * text's end is the cut (`cut`). Elsewhere an open element is prose (`Enter <password> when asked`).
 */
const XML_OPEN_AT_CUT = RE2JS.compile(String.raw`(^|[\s>"'(]|${LINE_ESCAPE})<((?:[A-Za-z_][A-Za-z0-9_.-]*)?(?i:${SECRET_WORDS})[A-Za-z0-9_.-]*)((?:\s[^<>\r\n]*)?)>[^<\r\n…]+?(…|$)`);
/**
 * MySQL's and MariaDB's clients take a password glued to `-p` (`mysql -u root -phunter2`; `-p` alone
 * prompts): after the client's name as a command word, within its own command (IN_COMMAND).
 */
const MYSQL_PASSWORD = RE2JS.compile(
  String.raw`(${COMMAND_START}(?:mysql|mariadb)(?:-?(?:dump|admin|import|show|check|slap|sh))?${IN_COMMAND}\s-p)(${QUOTED_SECRET}|${GLUED_SECRET})`,
);
/**
 * A registry client's `login` takes its password after `-p`, as the next word or glued (`-pVALUE`,
 * `-p=VALUE`): `docker login -u me -p hunter2`, `podman login -p x quay.io`, `crane auth login` —
 * only after `login` as the client's command (its global options before it: `docker --config d
 * login`), within its own command; `docker run -p 8080:80` publishes a port.
 */
const LOGIN_PASSWORD = RE2JS.compile(
  String.raw`(${COMMAND_START}(?:docker|podman|buildah|nerdctl|skopeo|oras|cosign|crane\s+auth)(?:\s+-[^\s;&|]+(?:\s+[^\s;&|-][^\s;&|]*)?)*?\s+login${IN_COMMAND}\s-p(?:[ \t]+|=)?)(${QUOTED_SECRET}|${GLUED_SECRET})`,
);
/**
 * sshpass takes its password after `-p`, glued or as the next word (`sshpass -p hunter2 ssh host`),
 * among its own options only (`-f file`, `-d fd`, `-P prompt`, `-e`, `-v`): the `-p` of the command
 * it runs (`sshpass -f pw ssh -p 22 host`) is that command's.
 */
const SSHPASS_PASSWORD = RE2JS.compile(
  String.raw`(${COMMAND_START}sshpass(?:\s+-[fdP][ \t]*[^\s;&|]+|\s+-[^\s;&|p][^\s;&|]*)*?\s+-p[ \t]*)(${QUOTED_SECRET}|${GLUED_SECRET})`,
);
/**
 * A secret's value after its name: group 1 double-quoted, 2 single-quoted, 3 bare — a bare one runs
 * to the next blank or the end of its line, whatever it holds (`hunter2,more;andmore`, `a'b"c`), but
 * for a quote that ends it (one before a blank or the end: the close of the quoted word it stands
 * in, `-H 'x-api-key: abc'`, which stays); a quoted one not closed on its line runs to its line's
 * end, taken only where a cut ended it (redactAssignments). Sticky, one character at a time: linear.
 */
const ASSIGNED_VALUE = /"([^"\r\n]+)"?|'([^'\r\n]+)'?|([^\s"',;](?:[^\s"']|["'](?=[^\s,:;}\]]))*)/y;
/** The first character of a bare value (that is not a quoted one's). */
const BARE_START = /[^\s"',;]/;
/**
 * …and after `=>`, where a bare word is not a value (`token => token.trim()`): a word, as far as a
 * `,` or `;`, passed over. Never the run to the next blank: another `=>` in it would scan it again.
 */
const ARROW_VALUE = /"([^"\r\n]+)"|'([^'\r\n]+)'|([^\s"',;]+)/y;
/**
 * A JSON member's name and separator, `"name": ` — any name: `"db.password"` too, or one spelt with
 * `\u` escapes (`"pass\u0077ord"`, read as JSON reads it) — and JSON inside a JSON string as well,
 * to any depth: `\"name\": ` (a Copilot `toolArgs` a hook echoes), `\\\"name\\\": ` (that echoed
 * inside a hook's JSON), its closing quote's backslashes (group 2) its depth. Its value is read in
 * code (`redactMembers`).
 */
const MEMBER_NAME = RE2JS.compile(String.raw`"((?:[^"\\\r\n]|\\+u[0-9A-Fa-f]{4})+)(\\*)"\s*:\s*`);
/** A JSON member's name as JSON reads it: its `\uXXXX` escapes decoded (each run of backslashes is one `\u`'s, as MEMBER_NAME takes them). */
const UNICODE_ESCAPE = /\\+u([0-9A-Fa-f]{4})/g;
const memberName = (raw: string) => (raw.includes("\\") ? raw.replace(UNICODE_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : raw);
/** A JSON number (a PIN, a numeric key), sticky: one run of one class. */
const JSON_NUMBER = /-?[0-9][0-9.eE+-]*/y;
/** A member or a quoted assignment whose value runs to the end of the text (cut there): redacted to the end. */
const OPEN_AT_END = RE2JS.compile(String.raw`(?:"([^"\\\r\n]+)"|\b([A-Za-z_][A-Za-z0-9_.-]*))(\s*[:=]\s*)"$`);
const COOKIE_LITERAL = /cookie:/i;
/** Values that name a scheme rather than hold a secret ("Authorization: Bearer [redacted]"), compared in lower case. */
const KEPT_VALUES = new Set(["bearer", "basic", "token", "digest", REDACTED]);

export function isSecretName(name: string): boolean {
  const tested = name.length > 2 * NAME_TESTED_CHARS ? `${name.slice(0, NAME_TESTED_CHARS)}_${name.slice(-NAME_TESTED_CHARS)}` : name;
  if (!SECRET_WORD.test(tested)) return false;
  return SECRET_NAME.matcher(tested.replace(CAMEL_STEP, "$1_$2").replace(ACRONYM_STEP, "$1_$2")).find();
}

type Match = ReturnType<RE2JS["matcher"]>;

/**
 * A redaction as steps: it pauses every `STEP_MATCHES` matches, where a caller on the shared thread
 * may let the event loop in (`inSlices`) — a text made to cost the redactor most (`token:` chained,
 * a match every six characters) costs re2js a few microseconds a character, a 64 KiB stream a tenth
 * of a second. Run through at once (`finish`), it is the plain function.
 */
export type Steps<T> = Generator<void, T, void>;
/** Matches between two pauses of a redaction in steps (each a few microseconds). */
const STEP_MATCHES = 64;

/**
 * The matches one redaction in steps has made so far, counted across all of it — every pattern, and
 * in a JSON walk every string and value — so that it pauses every `STEP_MATCHES` wherever they fall:
 * counted pattern by pattern or string by string, a walk over thousands of strings, each a few
 * dozen matches short of a pause, would never pause.
 */
interface Pace {
  n: number;
}

function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** `steps` run to their end, `letIn` awaited at each pause (it lets the event loop in once its slice is spent). */
export async function inSlices<T>(steps: Steps<T>, letIn: () => Promise<void>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await letIn();
  }
}

/** Every match of `re` in `text` replaced by what `fn` makes of it: one linear pass. */
function* replaceEach(re: RE2JS, text: string, fn: (m: Match) => string, pace: Pace): Steps<string> {
  const m = re.matcher(text);
  let out = "";
  let at = 0;
  while (m.find()) {
    out += text.slice(at, m.start()) + fn(m);
    at = m.end();
    if (++pace.n % STEP_MATCHES === 0) yield;
  }
  return at === 0 ? text : out + text.slice(at);
}

/** Blanks at a line's start, and at its end before the line break (sticky: one run of one class). */
const LINE_START = /\r?\n[ \t]*/y;
const LINE_END = /[ \t]*(?:\r?\n|$)/y;

/**
 * The value on the line after `at` (a line break there), when it stands alone on that line and
 * names nothing itself (`key:`, `- item`, `a: b` are not values): `password:\n  hunter2`.
 */
function nextLineValue(text: string, at: number): RegExpExecArray | null {
  LINE_START.lastIndex = at;
  if (!LINE_START.exec(text)) return null;
  ASSIGNED_VALUE.lastIndex = LINE_START.lastIndex;
  const v = ASSIGNED_VALUE.exec(text);
  if (!v) return null;
  LINE_END.lastIndex = ASSIGNED_VALUE.lastIndex;
  const bare = v[3];
  if (!LINE_END.exec(text) || (bare !== undefined && (bare.endsWith(":") || bare === "-" || bare.includes("=")))) return null;
  return v;
}

/**
 * Every `name=value` / `name: value` whose name is a secret's, its value redacted (quotes kept).
 * One pass: a search resumes after a secret's value, or right after any other name's separator, so
 * each character is scanned at most twice.
 */
function* redactAssignments(text: string, pace: Pace, cut: boolean): Steps<string> {
  const m = ASSIGNMENT.matcher(text);
  const inner = ASSIGNMENT.matcher(text);
  const isSecret = secretNameTest();
  let out = "";
  let copied = 0;
  let from = 0;
  // The bare value read last: one starting inside it ends where it ends (no blank or closing quote
  // in between), so a chain of assignments in one run (`token:token:…`) is read once, not once a link.
  let run = { start: -1, end: -1 };
  // A secret's assignment found inside the value before it, where the search resumes: taken as found.
  let ahead: { end: number; separator: string } | null = null;
  while (from < text.length) {
    if (++pace.n % STEP_MATCHES === 0) yield;
    let separator: string;
    if (ahead) {
      ({ end: from, separator } = ahead);
      ahead = null;
    } else {
      if (!m.find(from)) break;
      from = m.end();
      if (!isSecret(m.group(1)!)) continue;
      separator = m.group(2)!;
    }
    const arrow = separator.includes("=>");
    const valueRe = arrow ? ARROW_VALUE : ASSIGNED_VALUE;
    let v: RegExpExecArray | null;
    if (!arrow && from > run.start && from < run.end && BARE_START.test(text[from]!)) {
      const bare = text.slice(from, run.end);
      v = Object.assign([bare, undefined, undefined, bare], { index: from, input: text, groups: undefined }) as RegExpExecArray;
    } else {
      valueRe.lastIndex = from;
      v = valueRe.exec(text);
      if (v?.[3] !== undefined && !arrow) run = { start: v.index, end: v.index + v[0].length };
    }
    // `password:` at the end of its line: a YAML value on the next line, alone on it, is its value.
    if (!v && (text[from] === "\n" || text[from] === "\r")) v = nextLineValue(text, from);
    if (!v) continue;
    let value = v[1] ?? v[2] ?? v[3]!;
    const at = v.index;
    from = at + v[0].length;
    // `=>` takes a quoted value only (a Ruby or Perl hash): `token => token.trim()` is an arrow function.
    if (v[3] !== undefined && arrow) continue;
    // A bare value ends before another secret's assignment in it (`TOKEN=abc,password: S1`): the
    // search takes that one up next, and its value too. Searched within the value only, each
    // assignment once.
    if (v[3] !== undefined) {
      for (let f = at + 1; f < from && inner.find(f) && inner.start() < from; f = inner.end()) {
        if (++pace.n % STEP_MATCHES === 0) yield;
        if (!isSecret(inner.group(1)!)) continue;
        let cut = inner.start();
        while (cut > at + 1 && (text[cut - 1] === "," || text[cut - 1] === ";")) cut--;
        value = text.slice(at, cut);
        from = cut;
        ahead = { end: inner.end(), separator: inner.group(2)! };
        break;
      }
    }
    if (KEPT_VALUES.has(value.toLowerCase())) continue;
    const quote = v[1] !== undefined ? '"' : v[2] !== undefined ? "'" : "";
    // A quote not closed on its line is a value's only where a cut ended it: to a cut's mark (the
    // mark and the rest kept), or to the end of a text cut there. Elsewhere it is a quoted word's
    // close (`grep 'API_KEY=' .`, `read -p 'Password: '`) or an apostrophe: not a value.
    const closed = quote !== "" && v[0].length === value.length + 2;
    if (quote && !closed) {
      const mark = value.indexOf("…");
      if (mark > 0) {
        value = value.slice(0, mark);
        from = at + 1 + mark;
      } else if (!(cut && from === text.length)) {
        from = at;
        continue;
      }
    }
    // closed as it was: one not closed on its line stays so
    out += `${text.slice(copied, at)}${quote}${REDACTED}${closed ? quote : ""}`;
    copied = from;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Names at most this long are remembered, and this many, by one `secretNameTest`. */
const REMEMBERED_NAME_CHARS = 64;
const REMEMBERED_NAMES = 256;

/** `isSecretName`, each short name tested once per text: a text of one name's assignments repeated tests it once. */
function secretNameTest(): (name: string) => boolean {
  const known = new Map<string, boolean>();
  return (name) => {
    if (name.length > REMEMBERED_NAME_CHARS) return isSecretName(name);
    let secret = known.get(name);
    if (secret === undefined) {
      secret = isSecretName(name);
      if (known.size < REMEMBERED_NAMES) known.set(name, secret);
    }
    return secret;
  };
}

const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/**
 * Where the string value that starts at `from` ends, in JSON `depth` backslashes deep (0: JSON text,
 * 1: JSON in a JSON string, 3: that in a JSON string again, …): at the first quote that does not
 * stand for a quote inside the value, where the backslashes of that quote's own level start; -1
 * when the text ends first (cut). Each level doubles the backslashes of the one inside and adds one
 * before a quote, so a run of backslashes before a quote, counted modulo `2 × (depth + 1)`, is
 * `2 × depth + 1` for a quote in the value and `depth` for the closing one (escaped backslashes
 * before it are the value's). One pass over the value.
 */
function stringEnd(text: string, from: number, depth: number): number {
  const period = 2 * (depth + 1);
  let run = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      run++;
      continue;
    }
    if (c === QUOTE && run % period !== 2 * depth + 1) return i - (run % period);
    run = 0;
  }
  return -1;
}

/**
 * Where the array or object that opens at `from` ends (just past its closing bracket), in JSON
 * `depth` backslashes deep: brackets counted outside its strings, a string's quotes told from the
 * quotes inside it as `stringEnd` tells them. -1 when the text ends first (cut, or never balanced).
 * One pass over the value, no backtracking.
 */
function containerEnd(text: string, from: number, depth: number): number {
  const period = 2 * (depth + 1);
  let run = 0;
  let open = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      run++;
      continue;
    }
    if (c === QUOTE) {
      if (run % period !== 2 * depth + 1) inString = !inString;
    } else if (!inString) {
      if (c === 0x5b /* [ */ || c === 0x7b /* { */) open++;
      else if ((c === 0x5d /* ] */ || c === 0x7d /* } */) && --open === 0) return i + 1;
    }
    run = 0;
  }
  return -1;
}

/**
 * Every JSON member named like a secret, at any depth of JSON inside JSON strings, its value
 * redacted: a string, a number, an array or an object, `"[redacted]"` in its place (quoted as a
 * string is at its depth), and one cut by the end of the text to that end. A string value's quotes
 * are the name's (as many backslashes before each). One pass: a search resumes past a secret's
 * value, or just inside any other member's string, array or object (JSON in it is read too), so each
 * character is scanned at most twice.
 */
function* redactMembers(text: string, pace: Pace): Steps<string> {
  const m = MEMBER_NAME.matcher(text);
  let out = "";
  let copied = 0;
  let from = 0;
  while (from < text.length && m.find(from)) {
    if (++pace.n % STEP_MATCHES === 0) yield;
    const at = m.end();
    from = at;
    const depth = m.group(2)!.length;
    const quote = `${"\\".repeat(depth)}"`;
    const c = text[at];
    const secret = isSecretName(memberName(m.group(1)!));
    if (text.startsWith(quote, at)) {
      if (!secret) {
        from = at + quote.length; // any other name's string: read on inside it, where JSON may be
        continue;
      }
      // The value, its closing quote kept as it is: the search goes on past that quote.
      const close = stringEnd(text, at + quote.length, depth);
      out += `${text.slice(copied, at)}${quote}${REDACTED}`;
      if (close < 0) return out; // cut before its end: redacted to the end
      copied = close;
      from = text.indexOf('"', close) + 1;
      continue;
    }
    let end: number; // past the value; -1: cut
    if (c === "[" || c === "{") {
      if (!secret) {
        from = at + 1; // any other name's array or object: read on inside it
        continue;
      }
      end = containerEnd(text, at, depth);
    } else {
      JSON_NUMBER.lastIndex = at;
      if (!JSON_NUMBER.test(text)) continue;
      from = JSON_NUMBER.lastIndex;
      if (!secret) continue;
      end = from;
    }
    // An array, an object or a number: a string in its place, quoted as a string is at its depth.
    out += `${text.slice(copied, at)}${quote}${REDACTED}`;
    if (end < 0) return out; // cut before its end: redacted to the end
    out += quote;
    copied = from = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** RE2's `\s`: the blanks a separator's `\s*` takes. */
const isBlank = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d && c !== 0x0b);
const NAME_CHAR = /[A-Za-z0-9_.-]/;

/**
 * Where OPEN_AT_END can match, found from the end of the text without scanning it: its value opens
 * at the last quote no backslash escapes (no such quote may follow), right after its separator; the
 * name before that ends there, quoted or a run of name characters. The match starts at the name's
 * quote or within the run, so searching from one character before that finds it as a search of the
 * whole text would. -1: nowhere.
 */
function openValueFrom(text: string): { from: number; quote: number } | undefined {
  let q = text.length;
  let run = 1;
  while (run % 2 === 1) {
    if (q === 0) return undefined;
    q = text.lastIndexOf('"', q - 1);
    if (q < 0) return undefined;
    for (run = 0; q - run > 0 && text.charCodeAt(q - run - 1) === BACKSLASH; run++);
  }
  let e = q;
  while (e > 0 && isBlank(text.charCodeAt(e - 1))) e--;
  if (e === 0 || (text[e - 1] !== ":" && text[e - 1] !== "=")) return undefined;
  e--;
  while (e > 0 && isBlank(text.charCodeAt(e - 1))) e--;
  if (e === 0) return undefined;
  let start: number;
  if (text[e - 1] === '"') {
    start = e >= 2 ? text.lastIndexOf('"', e - 2) : -1;
    if (start < 0) return undefined;
  } else {
    for (start = e; start > 0 && NAME_CHAR.test(text[start - 1]!); start--);
    if (start === e) return undefined;
  }
  return { from: Math.max(0, start - 1), quote: q };
}

/** Redacts key-like values anywhere in a string. The caller caps it first (see `keep`). */
export function redactText(text: string): string {
  return finish(redactSteps(text));
}

/**
 * `redactText` in steps; `pace` counts its matches with those of the redaction it is part of; `cut`:
 * the text was cut at its end (a slice, a stream at its capture cap), marked or not.
 */
function* redactSteps(text: string, pace: Pace = { n: 0 }, cut = false): Steps<string> {
  let out = text;
  for (const { literal, re, scheme } of KEY_LIKE) {
    if (!holds(out, literal)) continue;
    out = yield* replaceEach(re, out, (m) => (scheme ? `${m.group(1)!} ${REDACTED}` : `${m.group(1) ?? ""}${REDACTED}`), pace);
  }
  if (out.includes("PRIVATE KEY")) {
    out = yield* replaceEach(PEM, out, (m) => {
      const kind = `${m.group(1)!}PRIVATE KEY${m.group(2) ?? ""}-----`;
      return `-----BEGIN ${kind}${REDACTED}-----END ${kind}`;
    }, pace);
  }
  if (out.includes("://")) out = yield* replaceEach(URL_PASSWORD, out, (m) => `${m.group(1)!}${REDACTED}@`, pace);
  if (COOKIE_LITERAL.test(out)) out = yield* replaceEach(COOKIE_HEADER, out, (m) => `${m.group(1)!}${REDACTED}`, pace);
  if (out.includes("-")) {
    out = yield* replaceEach(SECRET_OPTION, out, (m) => `${m.group(1)!}${m.group(2)!}${REDACTED}`, pace);
    if (out.includes("-p")) {
      const clients = [
        ...(out.includes("mysql") || out.includes("mariadb") ? [MYSQL_PASSWORD] : []),
        ...(out.includes("login") ? [LOGIN_PASSWORD] : []),
        ...(out.includes("sshpass") ? [SSHPASS_PASSWORD] : []),
      ];
      for (const re of clients) out = yield* replaceEach(re, out, (m) => `${m.group(1)!}${REDACTED}`, pace);
    }
    const places = [...(out.includes("-user") ? USER_OPTIONS.user : []), ...(out.includes("curl") && (out.includes("-u") || out.includes("-U")) ? USER_OPTIONS.curl : [])];
    for (const re of places) out = yield* replaceEach(re, out, (m) => `${m.group(1)!}${REDACTED}`, pace);
  }
  if (out.includes("</")) out = yield* replaceEach(XML_ELEMENT, out, (m) => (m.group(1) === m.group(4) && m.group(3) !== "" && isSecretName(m.group(1)!) ? `<${m.group(1)!}${m.group(2)!}>${REDACTED}</${m.group(4)!}>` : m.group()!), pace);
  if ((cut || out.includes("…")) && out.includes("<")) {
    out = yield* replaceEach(XML_OPEN_AT_CUT, out, (m) => ((cut || m.group(4) === "…") && isSecretName(m.group(2)!) ? `${m.group(1)!}<${m.group(2)!}${m.group(3)!}>${REDACTED}${m.group(4)!}` : m.group()!), pace);
  }
  // An assignment needs its separator, a JSON member a quote and a colon.
  if (!out.includes(":") && !out.includes("=")) return out;
  out = yield* redactAssignments(out, pace, cut);
  if (!out.includes('"')) return out;
  if (out.includes(":")) out = yield* redactMembers(out, pace);
  // The value runs from its quote to the end, checked in one pass (valueRunsToEnd); only the name,
  // its separator and that quote are left for the pattern: the value, maybe the whole text, is never
  // searched by it.
  const open = openValueFrom(out);
  if (!open || !valueRunsToEnd(out, open.quote + 1)) return out;
  const m = OPEN_AT_END.matcher(out.slice(open.from, open.quote + 1));
  if (!m.find()) return out;
  const name = m.group(1) ?? m.group(2)!;
  if (!isSecretName(name)) return out;
  return `${out.slice(0, open.from + m.start())}${m.group(1) !== null && m.group(1) !== undefined ? `"${name}"` : name}${m.group(3)!}"${REDACTED}`;
}

/** Whether the text from `at` to its end holds no quote a backslash does not escape, and no backslash before a line break or the end: a string's inside, open to the end. */
function valueRunsToEnd(text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return false;
    if (c === BACKSLASH) {
      if (i + 1 >= text.length || text.charCodeAt(i + 1) === 0x0a) return false;
      i++;
    }
  }
  return true;
}

/**
 * The first `maxBytes` of `text`, redacted. Only those bytes and a margin are scanned, whatever the
 * length of `text`; `cut` says whether anything was left out.
 */
export function capRedact(text: string, maxBytes: number, totalBytes?: number): { text: string; cut: boolean; droppedBytes: number } {
  return finish(capRedactSteps(text, maxBytes, totalBytes));
}

/** `capRedact` in steps. */
export function* capRedactSteps(text: string, maxBytes: number, totalBytes?: number): Steps<{ text: string; cut: boolean; droppedBytes: number }> {
  const room = maxBytes + REDACT_MARGIN_CHARS; // characters: each is at least one byte
  // `totalBytes`: `text` is the head of something this long (a hook's stream, kept in part)
  const total = totalBytes ?? Buffer.byteLength(text);
  // Cut before it came here (a stream at its capture cap) within the room: the word that cut went
  // through is no longer a key the patterns know, and is not kept (withoutCutWord).
  const cutBefore = totalBytes !== undefined && text.length <= room && totalBytes > Buffer.byteLength(text);
  const slice = text.length > room ? text.slice(0, room) : cutBefore ? withoutCutWord(text) : text;
  // Only where something before it was redacted shorter, and only what of it moved inside the cap
  // that way: else what is past the cap is cut anyway, and a long word keeps what the cap kept of it.
  const redacted = yield* redactSteps(slice, undefined, text.length > room || cutBefore);
  const shrunk = slice.length - redacted.length;
  const head = shrunk > 0 ? withoutCutRest(text, slice, redacted, headBytes(slice, maxBytes).length - shrunk) : redacted;
  const kept = headBytes(head, maxBytes);
  // A slice of a long text would hold all of it for as long as the kept text lives.
  if (kept.length === head.length && total <= maxBytes) return { text: kept === text ? text : detached(kept), cut: false, droppedBytes: 0 };
  // Past the cap in the original, or pushed past it by a longer "[redacted]".
  const droppedBytes = total > maxBytes ? total - maxBytes : Buffer.byteLength(head) - Buffer.byteLength(kept);
  return { text: detached(kept), cut: true, droppedBytes };
}

/**
 * `redacted` (the redaction of `slice`, a head of `text`) without what is left of the word the
 * slice's cut went through, when the redaction left it unredacted at its end: a key cut short is no
 * key a pattern knows — in a JSON value written as far as the margin it would stand there as it is,
 * and a secret redacted ahead of it shortens the text, moving it inside a kept text's cap. A cut
 * word the redaction took (a secret value open to the cut) is gone already. At most
 * MAX_WORD_CUT_CHARS; `keptBefore`: as far as the text was kept before anything moved (what of the
 * word the cap kept where it stood stays kept).
 */
function withoutCutRest(text: string, slice: string, redacted: string, keptBefore = 0): string {
  if (!cutsWord(text, slice.length)) return redacted;
  const word = slice.slice(withoutCutWord(slice).length);
  if (word === "") return redacted;
  if (redacted.endsWith(word)) return redacted.slice(0, Math.max(redacted.length - word.length, keptBefore));
  // Redacted inside the word: only the part after the last "[redacted]" may be the key's piece.
  const marker = redacted.lastIndexOf(REDACTED);
  const rest = marker < 0 ? "" : redacted.slice(marker + REDACTED.length);
  return rest !== "" && word.endsWith(rest) ? redacted.slice(0, redacted.length - rest.length) : redacted;
}

/** A string field as it is kept: redacted, at most `maxBytes`, and marked when cut. */
export function keep(text: string, maxBytes: number): string {
  const r = capRedact(text, maxBytes);
  return r.cut ? `${r.text}…[truncated ${r.droppedBytes} bytes]` : r.text;
}

/** `keep` on every string property of a flat record; other values as they are. */
export function keepStrings<T extends object>(record: T, maxBytes: number): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) out[k] = typeof v === "string" ? keep(v, maxBytes) : v;
  return out as T;
}

/**
 * JSON text of a parsed value with secret-named fields and key-like strings redacted, written only
 * up to about `budgetChars`: a 1 MiB event costs what its first few KB cost. `cut`: it stopped early.
 */
export function redactJson(value: unknown, budgetChars: number): { text: string; cut: boolean } {
  return finish(redactJsonSteps(value, budgetChars));
}

/** `redactJson` in steps. */
export function* redactJsonSteps(value: unknown, budgetChars: number): Steps<{ text: string; cut: boolean }> {
  let text = "";
  const pace: Pace = { n: 0 };
  const room = () => budgetChars - text.length + REDACT_MARGIN_CHARS;
  const full = () => text.length > budgetChars;
  // Each returns false once the budget is spent, and the walk stops there.
  function* str(s: string): Steps<boolean> {
    const r = room();
    const slice = s.length > r ? s.slice(0, r) : s;
    const redacted = yield* redactSteps(slice, pace, s.length > r);
    // (only where something before it was redacted shorter, as capRedactSteps does — here the whole rest)
    text += JSON.stringify(redacted.length < slice.length ? withoutCutRest(s, slice, redacted) : redacted);
    return s.length <= r && !full();
  }
  function* walk(v: unknown): Steps<boolean> {
    // Each value counts as a match: thousands of short strings or numbers pause too.
    if (++pace.n % STEP_MATCHES === 0) yield;
    if (typeof v === "string") return yield* str(v);
    if (Array.isArray(v)) {
      text += "[";
      for (let i = 0; i < v.length; i++) {
        if (i > 0) text += ",";
        if (!(yield* walk(v[i]))) return false;
      }
      text += "]";
      return !full();
    }
    if (v !== null && typeof v === "object") {
      text += "{";
      let first = true;
      for (const k in v) {
        const member = (v as Record<string, unknown>)[k];
        if (!Object.hasOwn(v, k) || member === undefined) continue; // as JSON.stringify leaves it out
        if (!first) text += ",";
        first = false;
        if (!(yield* str(k))) return false;
        text += ":";
        if (!(isSecretName(k) ? yield* str(REDACTED) : yield* walk(member))) return false;
      }
      text += "}";
      return !full();
    }
    text += JSON.stringify(v) ?? "null";
    return !full();
  }
  const whole = yield* walk(value);
  return { text, cut: !whole };
}
