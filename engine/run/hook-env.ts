/**
 * @module The environment a hook sees: what the hook declared, the project-dir variables and
 * COSH_RUNTIME (SERVICE.md §5), and, on the host, a short allow-list — never the server's secrets.
 */
import { PROJECT_DIR_VARS } from "../names.js";

export const SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Host variables a policy hook may inherit, by name. Nothing else of the server's environment. */
export const HOST_ENV_ALLOW = ["LANG", "LC_ALL", "TZ"] as const;

/** What the service sets and a hook's declared env never changes: where its project is, where it runs. */
export const FIXED_ENV_NAMES: ReadonlySet<string> = new Set([...PROJECT_DIR_VARS, "COSH_RUNTIME"]);

export function hookEnv(opts: {
  declared: Record<string, string>;
  projectDir: string;
  runtime: "host" | "container";
  home: string;
  inherit?: NodeJS.ProcessEnv;
}): Record<string, string> {
  const env: Record<string, string> = { PATH: SAFE_PATH, HOME: opts.home, LANG: "C.UTF-8" };
  for (const name of HOST_ENV_ALLOW) {
    const value = opts.inherit?.[name];
    if (value !== undefined) env[name] = value;
  }
  // Declared variables come next: a hook may set its own PATH, say — but not where its project is or
  // where it runs (SERVICE.md §5), which come last.
  const out = { ...env, ...opts.declared };
  for (const name of PROJECT_DIR_VARS) out[name] = opts.projectDir;
  out.COSH_RUNTIME = `hookbox-${opts.runtime}`;
  return out;
}
