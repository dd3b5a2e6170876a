/**
 * @module Byte-capped capture of a hook's stdout and stderr: keeps at most `maxBytes` per stream
 * and calls `onOverflow` once, so the runner can kill the hook. Memory stays bounded whatever the
 * hook prints.
 */

export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  overflowed = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    const room = this.maxBytes - this.size;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.size = this.maxBytes;
      this.overflowed = true;
      this.onOverflow();
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  text(): string {
    return this.bytes().toString("utf8");
  }
}

/** The two streams of one run; `overflowedStream` says which one first went over the cap. */
export class OutputCapture {
  readonly stdout: CappedBuffer;
  readonly stderr: CappedBuffer;
  overflowedStream: "stdout" | "stderr" | null = null;

  constructor(maxBytes: number, onOverflow: () => void) {
    const on = (stream: "stdout" | "stderr") => () => {
      if (this.overflowedStream) return;
      this.overflowedStream = stream;
      onOverflow();
    };
    this.stdout = new CappedBuffer(maxBytes, on("stdout"));
    this.stderr = new CappedBuffer(maxBytes, on("stderr"));
  }
}
