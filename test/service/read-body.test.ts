import { describe, expect, it } from "vitest";
import { maxPiecesOf, PieceJoiner } from "../../service/read-body.js";

describe("a body's pieces joined into blocks", () => {
  const joined = (maxPieces = 100) => {
    const out: Buffer[] = [];
    return { out, joiner: new PieceJoiner(8, maxPieces, (block) => out.push(block)) };
  };

  it("passes a body that came in one piece on as it is, never copied into a block", () => {
    const { out, joiner } = joined();
    const piece = Buffer.from("{}");
    joiner.add(piece);
    joiner.flush();
    expect(out).toHaveLength(1);
    expect(out[0]).toBe(piece);
  });

  it("copies later small pieces into blocks, and passes one of a block or more on as it is when nothing waits", () => {
    const { out, joiner } = joined();
    joiner.add(Buffer.from("a"));
    for (const c of "bcdefghi") joiner.add(Buffer.from(c));
    const large = Buffer.from("0123456789");
    joiner.add(large);
    joiner.add(Buffer.from("z"));
    joiner.add(large);
    joiner.flush();
    expect(out.map(String)).toEqual(["a", "bcdefghi", "0123456789", "z0123456", "789"]);
    expect(out[2]).toBe(large);
    // a block is as long as it was filled
    expect(out[3]!.length).toBe(8);
  });

  it("refuses the piece one past maxPieces, taking nothing of it", () => {
    const { out, joiner } = joined(3);
    expect([1, 2, 3].map((n) => joiner.add(Buffer.from(String(n))))).toEqual([true, true, true]);
    expect(joiner.add(Buffer.from("4"))).toBe(false);
    joiner.flush();
    expect(Buffer.concat(out).toString()).toBe("123");
  });

  it("allows a body its cap / the piece size of pieces, at least 4096", () => {
    expect(maxPiecesOf(1024 * 1024, 512)).toBe(4096);
    expect(maxPiecesOf(64 * 1024 * 1024, 512)).toBe(131_072);
  });
});
