/**
 * Redaction as a table: every kind of secret it knows, in the shapes hooks print them, and text
 * that must come through unchanged. Each pattern runs only where its literal occurs; these rows
 * hold it to the same answers as running every pattern everywhere.
 */
import { describe, expect, it } from "vitest";
import { headOfWords } from "../../engine/detached.js";
import { capRedact, capRedactSteps, inSlices, keep, redactJson, redactJsonSteps, redactText } from "../../service/records/redact.js";

describe("redactText", () => {
  it.each([
    ["a bearer token", "Authorization: Bearer abcdefgh12345678", "Authorization: Bearer [redacted]"],
    ["a header in a quoted word, its closing quote kept", "curl -H 'x-api-key: abc123' https://e", "curl -H 'x-api-key: [redacted]' https://e"],
    ["two secrets in one list, the second's name inside the first's bare value", "TOKEN=abc,password: S1", "TOKEN=[redacted],password: [redacted]"],
    ["an assignment ending a JSON string, a secret member after it", '{"cmd":"export NPM_TOKEN=abc","passphrase":"correct horse battery staple","decision":"block"}', '{"cmd":"export NPM_TOKEN=[redacted]","passphrase":"[redacted]","decision":"block"}'],
    ["an OpenAI / Anthropic key", "key is sk-proj-9f8e7d6c5b4a39281706 ok", "key is [redacted] ok"],
    ["a GitHub token", "ghp_1234567890abcdefghijABCDEFGHIJ123456", "[redacted]"],
    ["a GitHub server token", "x ghs_1234567890abcdefghijAB y", "x [redacted] y"],
    ["a fine-grained GitHub token", "github_pat_11ABCDEFG0123456789_abcdefghij", "[redacted]"],
    ["an AWS access key id", "AKIAABCDEFGHIJKLMNOP", "[redacted]"],
    ["a Slack token", "xoxb-1234567890-abcdef", "[redacted]"],
    ["a Google API key", "AIzaSyA1234567890abcdefghijklmnopqrstu", "[redacted]"],
    ["a JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.abcdefghijklmnop", "[redacted]"],
    ["KEY=value", "API_KEY=hunter2hunter2", "API_KEY=[redacted]"],
    ["KEY: value", "password: hunter2", "password: [redacted]"],
    ['KEY="value"', 'GITHUB_TOKEN="abc"', 'GITHUB_TOKEN="[redacted]"'],
    ["a JSON member", '{"client_secret": "s3cr3t", "name": "x"}', '{"client_secret": "[redacted]", "name": "x"}'],
    ["two kinds in one line", 'token=abc and Bearer 0123456789abcdef', "token=[redacted] and Bearer [redacted]"],
    ["a Basic credential", "Authorization: Basic dXNlcjpzM2NyZXQ=", "Authorization: Basic [redacted]"],
    ["a lower-case bearer token", "authorization: bearer abcdefghijklmnop1234", "authorization: bearer [redacted]"],
    ["a token scheme", "Authorization: token 0123456789abcdef", "Authorization: token [redacted]"],
    ["a header in JSON", '{"Authorization": "Basic dXNlcjpzM2NyZXQ="}', '{"Authorization": "[redacted]"}'],
    ["a password in a URL", "psql postgres://app:hunter2@db:5432/x", "psql postgres://app:[redacted]@db:5432/x"],
    ["a password in an https URL", "git clone https://admin:hunter2@git.example/x", "git clone https://admin:[redacted]@git.example/x"],
    ["a secret option's next word", "mysql --password hunter2 -u root", "mysql --password [redacted] -u root"],
    ["an --api-key option", "--api-key abc123 --verbose", "--api-key [redacted] --verbose"],
    ["a quoted value with spaces", 'password = "hunter 2"', 'password = "[redacted]"'],
    ["an assignment inside a quoted value", 'msg: "connect with password=hunter2 now"', 'msg: "connect with password=[redacted] now"'],
    ["an export inside a quoted command", `CMD="export API_TOKEN=s3cr3tvalue && ./deploy"`, `CMD="export API_TOKEN=[redacted] && ./deploy"`],
    ["a quoted secret option", 'mysql --password "hunter 2" -u root', "mysql --password [redacted] -u root"],
    ["a URL password holding / and @", "postgres://app:p@ss/w0rd@db:5432/x", "postgres://app:[redacted]@db:5432/x"],
    ["a single-quoted value", "DB_PASS='hunter 2'", "DB_PASS='[redacted]'"],
    ["camelCase names in JSON", '{"accessToken": "a1", "clientSecret": "b2", "refreshToken": "c3"}', '{"accessToken": "[redacted]", "clientSecret": "[redacted]", "refreshToken": "[redacted]"}'],
    ["a secret word inside a name", "SECRET_KEY_BASE=abc DB_PASS=def", "SECRET_KEY_BASE=[redacted] DB_PASS=[redacted]"],
    [
      "a PEM private key",
      "$ cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcdef\n-----END RSA PRIVATE KEY-----\nok",
      "$ cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----[redacted]-----END RSA PRIVATE KEY-----\nok",
    ],
    ["a secret word glued to its prefix", "PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=[redacted] psql -h db"],
    ["acronym camel case", '{"DBPassword": "a", "APISecret": "b", "APIToken": "c", "GHToken": "d", "SSHKey": "e", "GPGPassphrase": "f"}', '{"DBPassword": "[redacted]", "APISecret": "[redacted]", "APIToken": "[redacted]", "GHToken": "[redacted]", "SSHKey": "[redacted]", "GPGPassphrase": "[redacted]"}'],
    ["numbered names", "TOKEN_1=a GITHUB_TOKEN_2=b password2=c", "TOKEN_1=[redacted] GITHUB_TOKEN_2=[redacted] password2=[redacted]"],
    ["dotted and spaced names in JSON", '{"db.password": "a", "spring.datasource.password": "b", "api key": "c"}', '{"db.password": "[redacted]", "spring.datasource.password": "[redacted]", "api key": "[redacted]"}'],
    ["JSON inside a JSON string", String.raw`{"toolArgs":"{\"password\":\"hunter2\",\"api_key\":\"zzz\",\"command\":\"ls\"}"}`, String.raw`{"toolArgs":"{\"password\":\"[redacted]\",\"api_key\":\"[redacted]\",\"command\":\"ls\"}"}`],
    ["a JSON value cut before its end", '{"command": "ls", "client_secret": "0123456789abcdef', '{"command": "ls", "client_secret": "[redacted]'],
    ["a quoted assignment cut before its end", 'export DB_PASSWORD="0123456789abcdef', 'export DB_PASSWORD="[redacted]'],
    ["a PEM private key cut short", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B", "-----BEGIN PRIVATE KEY-----[redacted]-----END PRIVATE KEY-----"],
    ["an assignment behind another name's separator", "Error: API_KEY=abc123secret rejected", "Error: API_KEY=[redacted] rejected"],
    ["an env dump line", "env: AWS_SESSION_TOKEN=abc123secret", "env: AWS_SESSION_TOKEN=[redacted]"],
    ["a query string's secret", "a=b&password=SECRETVALUE123", "a=b&password=[redacted]"],
    ["an API key in a URL", "curl https://api.example.com/v1?api_key=SECRETVALUE123", "curl https://api.example.com/v1?api_key=[redacted]"],
    ["the first child of a YAML parent", "env:\n  API_KEY: abc123secret\n  DB_PASSWORD: hunter2", "env:\n  API_KEY: [redacted]\n  DB_PASSWORD: [redacted]"],
    ["a YAML secret whose value is on the next line, alone", "db:\n  password:\n    hunter2\n  user: app", "db:\n  password:\n    [redacted]\n  user: app"],
    ["a secret's value on the next line, CRLF", "Password:\r\nhunter2\r\n", "Password:\r\n[redacted]\r\n"],
    ["a nested YAML secret", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: hunter2", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: [redacted]"],
    ["a Stripe secret key", "charge with sk_live_51HabcdefghijklmnopqrstuV", "charge with [redacted]"],
    ["a GitLab token", "glpat-abcdefghijklmnopqrstu", "[redacted]"],
    ["an npm token", "//registry.npmjs.org/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789", "//registry.npmjs.org/:_authToken [redacted]"],
    ["a Hugging Face token", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[redacted]"],
    ["a Slack app token", "xapp-1-A0123456789-abcdef", "[redacted]"],
    ["a Python dict's secret (single-quoted name and value)", "{'password': 'S3cretPass', 'user': 'app'}", "{'password': '[redacted]', 'user': 'app'}"],
    ["a secret as a JSON number", '{"password": 123456789, "port": 5432}', '{"password": "[redacted]", "port": 5432}'],
    ["curl's user and password", "curl -u admin:S3cretPass https://x", "curl -u admin:[redacted] https://x"],
    ["a --user option's password", "curl --user=admin:S3cretPass --proxy-user p:Q5ecret x", "curl --user=admin:[redacted] --proxy-user p:[redacted] x"],
    ["curl's -u glued to its value", "curl -uadmin:S3cretPass https://x", "curl -uadmin:[redacted] https://x"],
    ["a quoted user and password holding a space", "curl --user 'admin:pass word' https://x", "curl --user 'admin:[redacted]' https://x"],
    ["MySQL's password glued to -p", "mysql -u root -phunter2xyz -h db; mysqldump -p'pass word' x", "mysql -u root -p[redacted] -h db; mysqldump -p[redacted] x"],
    ["MariaDB's password glued to -p, the client named by its path", "/usr/bin/mariadb -uroot -phunter2 && mariadb-dump -phunter3 db", "/usr/bin/mariadb -uroot -p[redacted] && mariadb-dump -p[redacted] db"],
    ["a \\u-escaped secret name in JSON inside a string", String.raw`{"toolArgs":"{\"pass\\u0077ord\": \"hunter2\"}"}`, String.raw`{"toolArgs":"{\"pass\\u0077ord\": \"[redacted]\"}"}`],
    ["a secret in an XML element", "<settings><password>hunter2xyz</password><user>me</user></settings>", "<settings><password>[redacted]</password><user>me</user></settings>"],
    ["a Ruby or Perl hash's secret (=>)", "{ password => 'hunter2xyz', 'api_key' => \"k9\" }", "{ password => '[redacted]', 'api_key' => \"[redacted]\" }"],
    ["a JSON member whose name is spelt with \\u escapes", '{"pass\\u0077ord":"hunter2xyz"}', '{"pass\\u0077ord":"[redacted]"}'],
    ["a password in a URL with no user", "redis-cli -u redis://:hunter2@cache:6379/0 ping", "redis-cli -u redis://:[redacted]@cache:6379/0 ping"],
    [
      "JSON in a JSON string echoed in a JSON string (three backslashes before each quote)",
      String.raw`{"out":"{\"toolArgs\":\"{\\\"password\\\":\\\"hunter2\\\",\\\"command\\\":\\\"ls\\\"}\"}"}`,
      String.raw`{"out":"{\"toolArgs\":\"{\\\"password\\\":\\\"[redacted]\\\",\\\"command\\\":\\\"ls\\\"}\"}"}`,
    ],
    ["JSON three strings deep (seven backslashes)", String.raw`\\\\\\\"api_key\\\\\\\": \\\\\\\"hunter2\\\\\\\", \\\\\\\"n\\\\\\\": 1`, String.raw`\\\\\\\"api_key\\\\\\\": \\\\\\\"[redacted]\\\\\\\", \\\\\\\"n\\\\\\\": 1`],
    [
      "a value holding a quote and ending in a backslash, in JSON inside a string",
      String.raw`{\"password\":\"a\\\"b\\\\\",\"x\":\"y\"} {\\\"token\\\":\\\"c\\\\\\\"d\\\\\\\\\\\"}`,
      String.raw`{\"password\":\"[redacted]\",\"x\":\"y\"} {\\\"token\\\":\\\"[redacted]\\\"}`,
    ],
    ["a bare value holding , and ;", "DB_PASSWORD=hunter2,more;andmore next", "DB_PASSWORD=[redacted] next"],
    ["a bare value holding quotes", `PASSWORD=a'b"c next`, "PASSWORD=[redacted] next"],
    ["a Cookie header's every cookie", "Cookie: theme=dark; session=s3cr3t\nHost: x", "Cookie: [redacted]\nHost: x"],
    ["a Set-Cookie header's value", "Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; HttpOnly\r\nVary: x", "Set-Cookie: [redacted]\r\nVary: x"],
    ["a secret JSON member's array", '{"token": ["abcdefabcdef", "x"], "name": "n"}', '{"token": "[redacted]", "name": "n"}'],
    ["a secret JSON member's object, a bracket in a string of it", '{"password": {"value": "hunter2", "b": "}]"}, "name": "n"}', '{"password": "[redacted]", "name": "n"}'],
    ["a secret JSON member's array deep in objects", '{"a": {"b": {"api_key": [["x"], {"y": 1}]}}, "c": 1}', '{"a": {"b": {"api_key": "[redacted]"}}, "c": 1}'],
    ["a secret JSON member's object cut before its end", '{"name": "n", "password": {"value": "hunter2", "b": [1, 2', '{"name": "n", "password": "[redacted]'],
    ["a secret's array and number in JSON inside a string", String.raw`{"toolArgs":"{\"token\":[\"a]\",\"b\"],\"password\":1234,\"x\":2}"}`, String.raw`{"toolArgs":"{\"token\":\"[redacted]\",\"password\":\"[redacted]\",\"x\":2}"}`],
    ["docker login's -p", "docker login -u me -p hunter2 registry.example; docker run -p 8080:80 img", "docker login -u me -p [redacted] registry.example; docker run -p 8080:80 img"],
    [
      "podman login's -p, and glued or after =",
      "podman login quay.io -u me -p hunter2 && docker --config /d login -phunter3 | nerdctl login -p=hunter4 r; crane auth login r -u me -p hunter5",
      "podman login quay.io -u me -p [redacted] && docker --config /d login -p[redacted] | nerdctl login -p=[redacted] r; crane auth login r -u me -p [redacted]",
    ],
    ["sshpass's -p, apart or glued", "sshpass -p hunter2 ssh -p 22 user@h; sshpass -v -phunter3 scp a h:b", "sshpass -p [redacted] ssh -p 22 user@h; sshpass -v -p[redacted] scp a h:b"],
    [
      "an armoured PGP private key",
      "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
      "-----BEGIN PGP PRIVATE KEY BLOCK-----[redacted]-----END PGP PRIVATE KEY BLOCK-----",
    ],
  ])("redacts %s", (_what, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });

  it.each([
    ["a plain word", "exited"],
    ["an empty string", ""],
    ["a short 'sk-'", "task-list sk-short"],
    ["a name that is not secret", "MODE=fast"],
    ["a JSON member that is not secret", '{"command": "ls -la"}'],
    ["the schemes kept", "Authorization: Basic"],
    ["a URL without a password", "https://github.com/a/b:c@d and git@github.com:x/y"],
    ["an option that is not secret", "ls --color auto --sort time"],
    ["a user without a password", "mysql -u root -h db"],
    ["MySQL's -p alone (it prompts) and -p of other tools", "mysql -u root -p mydb; mkdir -p a/b; grep -p x"],
    ["an XML element not named like a secret", "<user>me</user><keyboard>us</keyboard>"],
    ["generic types named like secrets", "export async function load(): Promise<Token> {\n  return fetchToken();\n}\nconst k: Option<ApiKey> = None; let s: List<Secret>;"],
    ["-p of other commands beside a mysql word", "docker run -d --name some-mysql -p3307:3306 mysql:8; ls mysql-data && tar -pczf x.tgz d; mysql -e 'select 1' && ssh -p2222 host"],
    ["an arrow function's parameter named like a secret", "items.map(token => token.trim()); keys.forEach(key => { use(key); })"],
    ["-u of tools that are not curl", "sort -u a:b; python -u x:y; git diff -u HEAD:a.txt"],
    ["a count named like a secret's word but not one", '{"token_count": 12, "keyboard": 3}'],
    ["names that only contain a secret word's letters", "bypass=1 passage=2 tokenizer=3 keyboard=4 monkey_see=5"],
    ["a public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----"],
    ["an AKIA too short", "AKIA1234"],
    ["a separator at a line's end: the next line is not its value", "password:\n  - one\ntoken =\n"],
    ["names holding a secret word that are not secret", "monkey_business: 1 xkeyx: 2 author: me"],
    ["a secret's name ending its line over a YAML mapping or list, not a value", "secrets:\n  token: [redacted]\npasswords:\n  - [redacted]\ntoken:\n  nested: x"],
    [
      "-p of a registry client's other commands, of ssh, of mkdir, and of the command sshpass runs",
      "docker run -p 8080:80 img; docker run --name login -p 80:80 img; podman pod create -p 80 x; ssh -p 22 host; mkdir -p a/b; sshpass -f pw ssh -p 22 host",
    ],
    ["arrays and objects of members not named like secrets", '{"tokens_used": [1, 2], "keyboard": {"layout": "us"}, "items": [{"name": "x"}]}'],
    ["an event", '{"session_id":"s-1","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"ls"}}'],
  ])("keeps %s as it is", (_what, text) => {
    expect(redactText(text)).toBe(text);
  });

  it("stays linear on blank runs around a scheme (the secret is found from the end, not by a backtracking search)", () => {
    const text = `Authorization:${" ".repeat(200_000)}Basic${" ".repeat(200_000)}dXNlcjpzM2NyZXQ=`;
    const t0 = performance.now();
    const out = redactText(text);
    // compared as a boolean: a diff of two 400 000-character strings is itself slow
    expect(out === `Authorization:${" ".repeat(200_000)}Basic [redacted]`).toBe(true);
    // a quadratic search over 400 000 blanks takes minutes; linear work is a few ms
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("stays linear on runs of assignments, secret-named or not (a value never makes the search start over)", () => {
    const t0 = performance.now();
    for (const unit of ["a:", "a=", "key: a ", "key=key=", "Error: token="]) {
      const text = unit.repeat(Math.ceil(200_000 / unit.length));
      expect(redactText(text).length).toBeGreaterThan(0);
    }
    // a quadratic search over 200 000 characters takes minutes; linear work is well under a second each
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  // A MiB of each shape, with its secret or the shape alone: a quadratic search or scan over it takes
  // hours; linear work is a second or two.
  it.each([
    ["URL passwords with no user", "s://:hunter2@h "],
    ["schemes with no user and no password", "s://:"],
    ["Cookie headers", "Cookie: a=b; s=hunter2\n"],
    ["one Cookie header a MiB long", "Cookie:Cookie: hunter2,"],
    ["bare values holding , ; and quotes", `DB_PASSWORD=hunter2,x;y PASSWORD=a'b"hunter2 `],
    ["bare words after => (passed over, never scanned again)", "token=>a,"],
    ["secret assignments chained in one bare run (the run read once)", "token:"],
    ["secret assignments chained in one bare run, each with its value", "TOKEN=hunter2;password:hunter2,"],
    ["members three backslashes deep", String.raw`\\\"password\\\":\\\"hunter2\\\",`],
    ["strings three backslashes deep, read inside", String.raw`\\\"a\\\":\\\"`],
    ["secret members' arrays and objects", '"token":["hunter2",{"a":"]"}],"password":{"b":[1]},'],
    ["arrays and objects of other names, read inside", '"a":{"b":['],
    ["one secret member's array never closed", '"password":[{"a":"hunter2",'],
    ["registry logins", "docker --config d login -u me -p hunter2 "],
    ["registry clients' options before no login", "docker -x login -x "],
    ["sshpass passwords", "sshpass -f f -p hunter2 ssh -p 22 h "],
    ["sshpass options before no -p", "sshpass -v "],
    ["clients after \\n escapes, their secrets in escaped quotes", String.raw`\nmysql -u root -p\"hunter2\" db\n`],
    ["commands a \\n escape ends, a -p in each", String.raw`mysql -u root db\nls -p `],
    ["options after a string's quote", '"--password hunter2 '],
    ["secret elements each open to a cut's mark", " <password>hunter2 x…"],
    ["quotes after secret names, each closed only by the next one", "PASSWORD='x API_KEY=\"y "],
  ])("stays linear on a MiB of %s, every secret redacted", (_what, unit) => {
    const text = unit.repeat(Math.ceil((1024 * 1024) / unit.length));
    const t0 = performance.now();
    const out = redactText(text);
    // compared as a boolean: a diff of two 1 MiB strings is itself slow
    expect(out.includes("hunter2")).toBe(false);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it("redacts a secret value that starts before the cap and runs past the margin redacted with it", () => {
    const kept = keep(`{"command":"deploy","client_secret":"${"s".repeat(700)}"}`, 40);
    expect(kept).not.toMatch(/sss/);
    expect(kept).toMatch(/^\{"command":"deploy","client_secret":"\[re…\[truncated/);
  });

  it("keeps a field within its cap, redacted, and says how much was cut", () => {
    expect(keep(`API_KEY=hunter2 ${"x".repeat(100)}`, 24)).toBe("API_KEY=[redacted] xxxxx…[truncated 92 bytes]");
  });
});

// The trace builder redacts a stream in steps, letting the event loop in between: a text made to cost
// the redactor most (a match every six characters) holds the shared thread a slice at a time.
describe("redaction in steps", () => {
  const chain = "token:".repeat(Math.floor((64 * 1024) / 6));
  it("pauses every few dozen matches, and comes to what it comes to at once", async () => {
    let pauses = 0;
    const letIn = async () => void pauses++;
    const streamed = await inSlices(capRedactSteps(chain, 64 * 1024), letIn);
    expect(streamed).toEqual(capRedact(chain, 64 * 1024));
    expect(streamed.text).toContain("token:[redacted]token:[redacted]");
    expect(pauses).toBeGreaterThan(100);
    const before = pauses;
    const json = await inSlices(redactJsonSteps({ notes: chain, password: "x" }, 64 * 1024), letIn);
    expect(json).toEqual(redactJson({ notes: chain, password: "x" }, 64 * 1024));
    expect(pauses - before).toBeGreaterThan(100);
  });

  // A stdin whose inputs are kept is a walk over many strings: the pauses count over the whole walk,
  // not string by string — each string a few dozen matches short of a pause, or none at all, would never pause.
  it.each([
    ["strings of a few dozen matches each", Array.from({ length: 400 }, () => "token:".repeat(60))],
    ["thousands of short strings", Array.from({ length: 20_000 }, () => "a")],
    ["thousands of numbers", Array.from({ length: 20_000 }, (_, i) => i)],
  ])("pauses over a JSON value of %s too", async (_, items) => {
    let pauses = 0;
    const value = { tool_input: { items } };
    const json = await inSlices(redactJsonSteps(value, 64 * 1024), async () => void pauses++);
    expect(json).toEqual(redactJson(value, 64 * 1024));
    expect(pauses).toBeGreaterThan(100);
  });
});

describe("a stream cut where it was captured (max_output_bytes at or under capture_bytes)", () => {
  const KEY = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
  it("keeps nothing of the word the capture cut: a key cut short is no key a pattern knows", () => {
    const captured = `error: use ${KEY.slice(0, 15)}`; // the hook printed the whole key; the runner kept this much
    const r = capRedact(captured, 4096, Buffer.byteLength(captured) + 100);
    expect(r.text).toBe("error: use ");
    expect(r.text).not.toContain("ghp_");
  });
  it("keeps a stream that came whole as it is, its last word too", () => {
    expect(capRedact("error: use abc", 4096).text).toBe("error: use abc");
    expect(capRedact("error: use abc", 4096, 14).text).toBe("error: use abc");
  });
});

describe("a key the margin's cut goes through, pulled inside the cap by a secret redacted ahead of it", () => {
  const NPM = "npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d";
  // Each long secret becomes "[redacted]": the text shrinks, and what stood past the margin moves in.
  // The margin's cut goes through the key after its first k characters (npm_ and at least one more).
  const texts = (cap: number) => [5, 8, 20, 35, 39].map((k) => `password=${"x".repeat(cap + 512 - 10 - k)} ${NPM} end`);
  it.each([512, 4096])("keeps no piece of it in a string kept at %i bytes", (cap) => {
    for (const text of texts(cap)) {
      const kept = keep(text, cap);
      expect(kept).not.toMatch(/npm_[A-Za-z0-9]/);
      expect(kept).toMatch(/^password=\[redacted\]/);
    }
  });
  it("keeps of a long word the cut goes through what stood within the cap before a secret ahead of it was redacted shorter", () => {
    const text = `Authorization: Bearer ${"eyJ".padEnd(60, "x")} ${"y".repeat(2000)}`;
    const kept = capRedact(text, 512).text;
    expect(kept).toMatch(/^Authorization: Bearer \[redacted\] y+$/);
    // the y's that stood within the first 512 characters, none that moved in
    expect(kept.length).toBe(512 - (60 - "[redacted]".length));
  });
  it("keeps a long word the cut goes through as far as the cap where nothing before it was redacted (a session id of a mebibyte)", () => {
    expect(keep(`0-${"s".repeat(1_000_000)}`, 1024)).toMatch(/^0-s{1022}…\[truncated \d+ bytes\]$/);
  });
  it("nor in a JSON value written within its budget", () => {
    for (const text of texts(2048)) {
      const { text: written } = redactJson({ command: text, note: "after" }, 2048);
      expect(written).not.toMatch(/npm_[A-Za-z0-9]/);
    }
  });
});

describe("a key right after a JSON escape, in a hook's raw output", () => {
  const KEY = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
  it.each(["\\n", "\\t", "\\r", "\\u0041"])("after %s: redacted, the escape kept", (escape) => {
    const raw = `{"decision":"block","reason":"x:${escape}${KEY}"}`;
    expect(redactText(raw)).toBe(`{"decision":"block","reason":"x:${escape}[redacted]"}`);
  });
  it.each([
    ["a colour code, escaped", String.raw`{"out":"\u001b[1mghp_1234567890abcdefghijABCDEFGHIJ123456\u001b[0m"}`, String.raw`{"out":"\u001b[1m[redacted]\u001b[0m"}`],
    ["a colour code, raw", "\x1b[31mghp_1234567890abcdefghijABCDEFGHIJ123456", "\x1b[31m[redacted]"],
  ])("after %s: redacted, the code kept", (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it("a key glued to a word is still no key's start", () => {
    expect(redactText(`xghp_${KEY.slice(4)}`)).toBe(`xghp_${KEY.slice(4)}`);
  });
});

describe("a quoted secret cut before its closing quote", () => {
  it.each([
    ['run --password "correct horse', 'run --password [redacted]'],
    ["mysql -u root -p'correct horse", "mysql -u root -p[redacted]"],
    ['docker login -u me -p "correct horse', "docker login -u me -p [redacted]"],
    ["sshpass -p 'correct horse", "sshpass -p [redacted]"],
  ])("%s: redacted to the text's end", (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it("a closed one as before, the rest of the line kept", () => {
    expect(redactText('run --password "a b" --verbose')).toBe("run --password [redacted] --verbose");
  });
});

describe("a secret element cut before its end tag", () => {
  it.each([
    ["marked as a text hookbox cut is", "<password>correct horse…", "<password>[redacted]…"],
    ["an ellipsis inside the text, read as a cut's mark", "<password>correct horse… and more", "<password>[redacted]… and more"],
    ["a hook's record text", "x <password>correct horse…[truncated 120 bytes]", "x <password>[redacted]…[truncated 120 bytes]"],
    ["in a hook's raw JSON, after a string's quote", '{"reason":"<password>correct horse…', '{"reason":"<password>[redacted]…'],
    ["in a hook's raw JSON, after an escape", String.raw`{"reason":"config:\n<apiToken>correct horse…`, String.raw`{"reason":"config:\n<apiToken>[redacted]…`],
  ])("%s: redacted to the cut", (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it.each([
    ["closed", '<password type="plain">correct horse</password> ok', '<password type="plain">[redacted]</password> ok'],
    ["cut", '<apiKey id="1">correct horse…', '<apiKey id="1">[redacted]…'],
  ])("with attributes, %s: its text redacted, its attributes kept", (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it("shown in an error, a closing quote after the cut's mark", () => {
    expect(redactText('unknown decision "Login with <password>correct horse …"')).toBe('unknown decision "Login with <password>[redacted]…"');
  });
  it("a stream cut where it was captured: redacted to the cut, the word the cut went through dropped", () => {
    expect(capRedact("conf: <db><apiToken>correct horse battery", 4096, 5000).text).toBe("conf: <db><apiToken>[redacted]");
  });
  it("a string field sliced at its budget: redacted to the cut", () => {
    const { text } = redactJson({ note: `${"n".repeat(10)} <password>${"correct horse ".repeat(100)}` }, 200);
    expect(text).toContain("<password>[redacted]");
    expect(text).not.toContain("correct");
  });
  it.each([
    ["a usage line", "Usage: deploy login <token> --env prod"],
    ["prose", "Enter <password> when asked"],
    ["a type assertion", "const t = <Token>JSON.parse(s);"],
    ["an open element in a text not cut", "<password>correct horse"],
    ["a closed one's next element, cut", "<password>a b</password><note>kept…"],
    ["one whose text goes on past its line, cut", "<password>\nkept…"],
  ])("%s: as it was (a closed secret element still redacted)", (_, text) => {
    expect(redactText(text)).toBe(text.replace("<password>a b</password>", "<password>[redacted]</password>"));
  });
});

describe("secrets in a hook's raw JSON output: after a string's quote or a JSON escape, in escaped quotes", () => {
  it.each([
    [String.raw`{"reason":"x:\nBearer abcdefghijklmnop1234"}`, String.raw`{"reason":"x:\nBearer [redacted]"}`],
    [String.raw`{"reason":"x:\nAuthorization: Basic dXNlcjpwYXNzd29yZA=="}`, String.raw`{"reason":"x:\nAuthorization: Basic [redacted]"}`],
    [String.raw`{"reason":"run --password \"hunter2\" now"}`, '{"reason":"run --password [redacted] now"}'],
    [String.raw`{"reason":"run --password \"correct horse`, '{"reason":"run --password [redacted]'],
    [String.raw`{"reason":"x:\n--password hunter2"}`, String.raw`{"reason":"x:\n--password [redacted]"}`],
    ['{"args":"--api-key hunter2 --verbose"}', '{"args":"--api-key [redacted] --verbose"}'],
    ['{"cmd":"mysql -u root -phunter2"}', '{"cmd":"mysql -u root -p[redacted]"}'],
    [String.raw`{"reason":"x:\nmysql -u root -phunter2"}`, String.raw`{"reason":"x:\nmysql -u root -p[redacted]"}`],
    [String.raw`x; mysql -u root -p\"hunter2\" db`, "x; mysql -u root -p[redacted] db"],
    [String.raw`{"reason":"x:\nsshpass -p hunter2 ssh h"}`, String.raw`{"reason":"x:\nsshpass -p [redacted] ssh h"}`],
    [String.raw`sshpass -p \"hunter2\" ssh h`, "sshpass -p [redacted] ssh h"],
    [String.raw`{"reason":"x:\ndocker login -u me -p hunter2"}`, String.raw`{"reason":"x:\ndocker login -u me -p [redacted]"}`],
    [String.raw`docker login -u me -p \"hunter2\" r`, "docker login -u me -p [redacted] r"],
  ])("%s", (text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it.each([
    ["a port", '{"cmd":"docker run -p 8080:80 img"}'],
    ["an option's name alone in a list", '["--password","--verbose"]'],
    ["an option named past its secret word", '{"note":"--password-file /run/secrets/pw"}'],
    ["a client's prompting -p ending the JSON string", '{"command":"mysql -u root -p"}'],
    ["a client's prompting -p before the next member", '{"command":"sudo mysql -u root -p","description":"connect"}'],
    ["a registry login's prompting -p", '{"command":"docker login -u me -p","x":1}'],
  ])("%s: as it was", (_, text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe("a word longer than MAX_WORD_CUT_CHARS cut in its middle", () => {
  it("a JWT of large claims keeps at most its header and claims: no 10 characters of its signature", () => {
    // base64url of no period (a linear congruential sequence): the signature's head is nowhere else
    const b64 = (n: number, seed: number) => {
      let x = seed;
      return Array.from({ length: n }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[(x = (x * 1103515245 + 12345) % 2 ** 31) >>> 25]).join("");
    };
    const signature = b64(342, 7);
    const jwt = `eyJhbGciOiJSUzI1NiJ9.${b64(2500, 3)}.${signature}`;
    // glued to more of the same word, as in a hook's minified output
    const text = `token ${jwt}${"x".repeat(1500)}`;
    for (let max = 6; max <= text.length; max += 7) {
      const out = redactText(headOfWords(text, max));
      expect(out, `cut at ${max}`).not.toContain(signature.slice(0, 10));
    }
  });
});

describe("an assigned secret whose quote is not closed on its line", () => {
  it.each([
    ["cut where a mark says", "export PGPASSWORD='correct horse…", "export PGPASSWORD='[redacted]…"],
    ["cut, in a hook's record", "run --password='correct horse…[truncated 80 bytes]", "run --password='[redacted]…[truncated 80 bytes]"],
    ["cut, shown in an error", 'unknown decision "API_TOKEN=\'correct horse…"', 'unknown decision "API_TOKEN=\'[redacted]…"'],
  ])("%s: redacted to the cut, the mark kept", (_, text, expected) => {
    expect(redactText(text)).toBe(expected);
  });
  it("a stream cut where it was captured: redacted to the end", () => {
    expect(capRedact("export PGPASSWORD='correct horse battery", 4096, 5000).text).toBe("export PGPASSWORD='[redacted]");
  });
  it("a closed one as before, the rest of the line kept", () => {
    expect(redactText("PGPASSWORD='a b' psql")).toBe("PGPASSWORD='[redacted]' psql");
  });
});

describe("what only looks like a secret's start, in the commands and JSON an agent sends: as it was", () => {
  it.each([
    ["a quoted word ending in a secret's name", '{"tool_input":{"command":"grep -rn \'API_KEY=\' .","description":"Find API key usages"}}'],
    ["a prompt's text", '{"tool_input":{"command":"read -sp \'Password: \' PW && echo ok","description":"x"}}'],
    ["a prompt in code", "pw = input('Enter API key: ')"],
    ["a header joined to a variable", "curl -H 'X-Api-Key: '\"$KEY\" https://x"],
    ["an apostrophe", "password: 'tis the season, said the admin"],
    ["an open quote in a text not cut", "export PGPASSWORD='correct horse"],
    ["a client's prompting -p before a \\n escape", String.raw`{"tool_input":{"command":"mysql -u root -p\ncat notes.txt"}}`],
    ["another command's -p after a \\n escape", String.raw`{"tool_input":{"command":"mysql -u root db < schema.sql\nssh -p2222 deploy@host"}}`],
    ["a compose project after a login", String.raw`{"tool_input":{"command":"docker login ghcr.io\ndocker compose -p myproj up -d"}}`],
    ["a prompting -p in JSON in JSON", String.raw`{"toolArgs":"{\"command\":\"mysql -p\"}"}`],
    ["a prompting -p before the next member of JSON in JSON", String.raw`{"toolArgs":"{\"command\":\"mysql -u root -p\",\"x\":1}"}`],
    ["a prompting -p, a blank before the comma", '{"tool_input":{"command":"mysql -p" , "description":"x"}}'],
    ["a generic type in a cut text", "Expected Promise<Token> but got undefined…[truncated 1234 bytes]"],
    ["a constrained generic in a cut text", "function pick<Key extends string>(k: Key) { return k…"],
  ])("%s", (_, text) => {
    expect(redactText(text)).toBe(text);
  });
});
