/**
 * @module cosh extensions: `cosh-extension.json` in each configured extension folder, with groups
 * (`matcher`, `sequential`) of nested hooks; `${extensionPath}` and `${workspacePath}` are
 * substituted. cosh-hooks.md: extension hooks "are merged with configuration file hooks and use the
 * same execution protocol" — cosh's rules apply.
 */
import { basename } from "node:path";
import { z } from "zod";
import type { HookSet } from "../hooks.js";
import { WORKSPACE_PATH } from "../names.js";
import { CoshHookSchema, coshHookDef } from "./cosh-toml.js";
import { configEvent, originOf, PAST_LIMIT, schemaError, warn, type LoadContext, type ParsedFile } from "./shared.js";

export const EXTENSION_FILE = "cosh-extension.json";

const ExtensionHookSchema = CoshHookSchema.extend({
  type: z.literal("command", { error: 'only "command" hooks can run here' }).optional(),
  description: z.string().optional(),
});
const GroupSchema = z.strictObject({
  matcher: z.string().optional(),
  /** cosh-hooks.md: hooks run sequentially; `sequential = false` lets a group's hooks run at once */
  sequential: z.boolean().optional(),
  /** each checked on its own (ExtensionHookSchema), once it is known to have a name */
  hooks: z.array(z.unknown()),
});
// The manifest carries more than hooks (mcpServers, contextFileName …): only these keys are read.
const ManifestSchema = z.looseObject({
  name: z.string().min(1),
  version: z.string().optional(),
  hooks: z.record(z.string(), z.array(GroupSchema)).optional(),
});

export function loadExtension(parsed: ParsedFile, dir: string, ctx: LoadContext): HookSet {
  const manifest = ManifestSchema.safeParse(parsed.value);
  if (!manifest.success) throw schemaError(parsed, manifest.error);
  const set: HookSet = { hooks: [], warnings: [], disableAll: false };
  const substitute = (s: string) => s.replaceAll("${extensionPath}", dir).replaceAll("${workspacePath}", WORKSPACE_PATH);
  for (const [event, groups] of Object.entries(manifest.data.hooks ?? {})) {
    const resolved = configEvent(parsed, ["hooks", event], event);
    groups.forEach((group, g) => {
      group.hooks.forEach((raw, h) => {
        const path = ["hooks", event, g, "hooks", h];
        // cosh-hooks.md: "Hook definitions without a name field are skipped" — before anything else of theirs is read.
        if (typeof raw === "object" && raw !== null && !Array.isArray(raw) && !(raw as { name?: unknown }).name) {
          warn(set.warnings, () => `${originOf(parsed, path)}: hook without a name skipped (cosh-hooks.md: "Hook definitions without a name field are skipped"): it never runs`);
          return;
        }
        const checked = ExtensionHookSchema.safeParse(raw);
        if (!checked.success) throw schemaError(parsed, checked.error, path);
        const entry = checked.data;
        const { type: _type, description: _description, ...cosh } = entry;
        const hook = coshHookDef(
          { ...cosh, matcher: cosh.matcher ?? group.matcher, command: substitute(cosh.command) },
          { ...ctx, point: resolved.point, eventName: event, dialect: resolved.dialect, origin: originOf(parsed, path), parsed, path },
          set.warnings,
        );
        // (the server's own files are strict: a matcher past hookbox's limits was refused in coshHookDef)
        if (hook === PAST_LIMIT) return;
        hook.name = `${manifest.data.name}/${hook.name}`;
        hook.env = Object.fromEntries(Object.entries(hook.env).map(([k, v]) => [k, substitute(v)]));
        hook.mounts = [dir];
        if (group.sequential === false) hook.batch = `${basename(dir)}:${event}[${g}]`;
        set.hooks.push(hook);
      });
    });
  }
  return set;
}
