/** Builds tar archives in memory, well-formed or hostile. */
import { pack } from "tar-stream";
import { gzipSync } from "node:zlib";

export type Entry =
  | { name: string; content: string; mode?: number }
  | { name: string; type: "directory" }
  | { name: string; type: "symlink" | "link"; linkname: string }
  | { name: string; type: "character-device" };

export async function tarOf(entries: Entry[], opts: { gzip?: boolean } = {}): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(c as Buffer));
  const ended = new Promise<void>((r) => p.on("end", () => r()));
  for (const e of entries) {
    if ("content" in e) await new Promise<void>((r, j) => p.entry({ name: e.name, mode: e.mode ?? 0o644 }, e.content, (err) => (err ? j(err) : r())));
    else if (e.type === "directory") p.entry({ name: e.name, type: "directory" });
    else if (e.type === "character-device") p.entry({ name: e.name, type: "character-device", devmajor: 1, devminor: 3 });
    else p.entry({ name: e.name, type: e.type, linkname: e.linkname });
  }
  p.finalize();
  await ended;
  const tar = Buffer.concat(chunks);
  return opts.gzip ? gzipSync(tar) : tar;
}
