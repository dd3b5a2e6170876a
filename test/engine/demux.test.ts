/**
 * The engine's multiplexed attach stream split into stdout and stderr. A hook decides how its
 * output is framed: one frame per write, so a hook writing a byte at a time fills a socket read
 * with thousands of 9-byte frames. The real engine's framing is exercised by every container test;
 * here, the frames a hook can make, fed in the chunks a socket may deliver.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DockerClient } from "../../engine/run/docker-client.js";

function frame(kind: 1 | 2, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = kind;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function collector() {
  const parts: Buffer[] = [];
  let writes = 0;
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      parts.push(chunk);
      writes++;
      cb();
    },
  });
  return { w, text: () => Buffer.concat(parts).toString("latin1"), writes: () => writes };
}

/** Feeds `bytes` to the client's splitter in chunks of the given sizes (the rest in one). */
function feed(bytes: Buffer, sizes: number[] = []) {
  const stream = new PassThrough();
  const out = collector();
  const err = collector();
  new DockerClient().demux(stream, out.w, err.w);
  let at = 0;
  for (const n of sizes) {
    stream.write(bytes.subarray(at, at + n));
    at += n;
  }
  if (at < bytes.length) stream.write(bytes.subarray(at));
  return { out, err };
}

describe("splitting a hook's output from the engine's frames", () => {
  it("takes one socket read of 100 000 one-byte frames without overflowing the stack, in one write per stream", () => {
    const frames: Buffer[] = [];
    let expectOut = "";
    let expectErr = "";
    for (let i = 0; i < 100_000; i++) {
      const c = String.fromCharCode(97 + (i % 26));
      if (i % 3 === 0) {
        frames.push(frame(2, Buffer.from(c)));
        expectErr += c;
      } else {
        frames.push(frame(1, Buffer.from(c)));
        expectOut += c;
      }
    }
    const { out, err } = feed(Buffer.concat(frames));
    expect(out.text()).toBe(expectOut);
    expect(err.text()).toBe(expectErr);
    expect(out.writes()).toBe(1);
    expect(err.writes()).toBe(1);
  });

  it("reassembles headers and payloads cut anywhere between reads", () => {
    const bytes = Buffer.concat([frame(1, Buffer.from("hello ")), frame(2, Buffer.from("warn")), frame(1, Buffer.alloc(0)), frame(1, Buffer.from("world"))]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { out, err } = feed(bytes, [cut, 3, 1]);
      expect(out.text()).toBe("hello world");
      expect(err.text()).toBe("warn");
    }
    // one byte a read
    const { out, err } = feed(bytes, Array.from({ length: bytes.length }, () => 1));
    expect(out.text()).toBe("hello world");
    expect(err.text()).toBe("warn");
  });

  it("passes a stream that is not multiplexed on as stdout, whole", () => {
    const { out, err } = feed(Buffer.from("plain text, no frames"), [3]);
    expect(out.text()).toBe("plain text, no frames");
    expect(err.text()).toBe("");
  });
});
