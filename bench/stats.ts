/** Percentiles and a printed table. */

export interface Figures {
  name: string;
  n: number;
  p50: number;
  p90: number;
  p99: number;
  /** events per second, for throughput rows */
  rate?: number;
  note?: string;
}

export function percentiles(name: string, samplesMs: number[], note?: string): Figures {
  const s = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { name, n: s.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), ...(note ? { note } : {}) };
}

export function table(rows: Figures[]): string {
  const fmt = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "" : v >= 100 ? v.toFixed(0) : v.toFixed(2));
  const head = ["measurement", "n", "p50 ms", "p90 ms", "p99 ms", "events/s", "note"];
  const body = rows.map((r) => [r.name, String(r.n), fmt(r.p50), fmt(r.p90), fmt(r.p99), fmt(r.rate), r.note ?? ""]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => "| " + cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ") + " |";
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}
