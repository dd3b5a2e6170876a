/**
 * @module Byte-capped capture of a hook's stdout and stderr: keeps at most `maxBytes` per stream
 * and calls `onOverflow` once, so the runner can kill the hook. Memory stays bounded whatever the
 * hook prints.
 */

export class CappedBuffer {
  /**
   * What was kept, in one buffer of its own, grown by doubling up to the cap: every piece is copied
   * in. A hook that writes a byte at a time arrives in a piece a write, each a slice of the read
   * that carried it — kept as they came, a mebibyte of output would hold a million small buffers
   * (and their reads' memory) and take the loop hundreds of milliseconds to join.
   */
  private kept = Buffer.alloc(0);
  private size = 0;
  overflowed = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.overflowed) return;
    const room = this.maxBytes - this.size;
    const taken = chunk.length > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
    this.append(taken);
    if (chunk.length > room) {
      this.overflowed = true;
      this.onOverflow();
    }
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    const need = this.size + piece.length;
    if (need > this.kept.length) {
      let grown = Math.max(this.kept.length * 2, FIRST_KEPT_BYTES);
      while (grown < need) grown *= 2;
      const next = Buffer.allocUnsafe(Math.min(grown, Math.max(this.maxBytes, need)));
      this.kept.copy(next, 0, 0, this.size);
      this.kept = next;
    }
    piece.copy(this.kept, this.size);
    this.size = need;
  }

  /** What was kept (a view: later pieces are written past its end, never into it). */
  bytes(): Buffer {
    return this.kept.subarray(0, this.size);
  }

  text(): string {
    return this.bytes().toString("utf8");
  }
}

/** The first buffer a stream's output is kept in: most hooks print far less. */
const FIRST_KEPT_BYTES = 4096;

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
