/** Builds tar archives in memory, well-formed or hostile. */
import { pack } from "tar-stream";
import { randomFillSync } from "node:crypto";
import { Readable } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";

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

const MiB = 1024 * 1024;

/**
 * A tar.gz of one file of `sizeBytes`, mostly zeros with a little random data in each MiB,
 * streamed through gzip: small to upload, large unpacked.
 */
export async function sparseTarGz(name: string, sizeBytes: number): Promise<Buffer> {
  const p = pack();
  const gz = p.pipe(createGzip());
  const chunks: Buffer[] = [];
  gz.on("data", (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((r, j) => { gz.on("end", () => r()); gz.on("error", j); });
  const entry = p.entry({ name, size: sizeBytes, mode: 0o644 });
  for (let left = sizeBytes; left > 0; left -= MiB) {
    const chunk = Buffer.alloc(Math.min(MiB, left));
    randomFillSync(chunk, 0, Math.min(256, chunk.length));
    if (!entry.write(chunk)) await new Promise<void>((r) => entry.once("drain", () => r()));
  }
  entry.end(() => undefined);
  p.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * A gzip stream that inflates to `totalBytes` of zeros (a bomb): gzip members of `memberBytes`
 * each, compressed once and repeated — RFC 1952 lets members follow one another, and gunzip
 * inflates them as one stream. Compressing 8 GiB at once would take ~20 s for the same bytes.
 */
export async function zerosGzip(totalBytes: number, memberBytes = 64 * MiB): Promise<Buffer> {
  const zero = Buffer.alloc(MiB);
  let sent = 0;
  const source = new Readable({
    read() {
      this.push(sent < memberBytes ? zero.subarray(0, Math.min(MiB, memberBytes - sent)) : null);
      sent += MiB;
    },
  });
  const member: Buffer[] = [];
  for await (const c of source.pipe(createGzip({ level: 9 }))) member.push(c as Buffer);
  const one = Buffer.concat(member);
  return Buffer.concat(Array.from({ length: Math.ceil(totalBytes / memberBytes) }, () => one));
}

/** One raw tar member — a ustar header of `typeflag` and its data, padded to whole blocks — for headers `pack` does not write (a pax global header, say). */
export function rawMember(name: string, typeflag: string, data: Buffer): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100, "utf8");
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${data.length.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write(typeflag, 156);
  header.write("ustar\0", 257);
  header.write("00", 263);
  sign(header);
  return Buffer.concat([header, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

/** Writes a ustar header's checksum: its bytes summed, the checksum field counted as spaces. */
function sign(header: Buffer): void {
  header.fill(" ", 148, 156);
  let sum = 0;
  for (const b of header.subarray(0, 512)) sum += b;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
}

/**
 * One header of `typeflag` (a link's to `linkname`) and no data whose size field opens with
 * `firstByte`, its checksum right: 0x81–0xFE marks a base-256 number that is neither positive (0x80)
 * nor negative (0xFF) — a size tar-stream 3.2 reads as null, and once took as an entry that never ends.
 */
export function badSizeMember(name: string, typeflag = "0", firstByte = 0x81, linkname = ""): Buffer {
  const header = rawMember(name, typeflag, Buffer.alloc(0));
  header[124] = firstByte;
  header.write(linkname, 157, 100, "utf8");
  sign(header);
  return header;
}

/** pax records (`LEN key=value\n`, LEN counting itself) of `pairs`. */
export function paxRecords(pairs: [string, string][]): Buffer {
  return Buffer.from(
    pairs
      .map(([k, v]) => {
        const body = ` ${k}=${v}\n`;
        let len = Buffer.byteLength(body) + 1;
        while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
        return `${len}${body}`;
      })
      .join(""),
  );
}

/** The two zero blocks that end a tar archive. */
export const TAR_END = Buffer.alloc(1024);
