/**
 * @module Prometheus text for `/metrics`: events, hooks by source/decision/outcome, latency
 * histograms, queue depth, containers running.
 */

const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type Labels = Record<string, string>;
const key = (labels: Labels) => JSON.stringify(Object.entries(labels).sort());
const fmt = (labels: Labels) => {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
};

class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1): void {
    const k = key(labels);
    const hit = this.values.get(k);
    if (hit) hit.value += by;
    else this.values.set(k, { labels, value: by });
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.values.values()) lines.push(`${this.name}${fmt(labels)} ${value}`);
    return lines.join("\n");
  }
}

class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string) {}
  observe(seconds: number, labels: Labels = {}): void {
    const k = key(labels);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { labels, counts: BUCKETS_S.map(() => 0), sum: 0, count: 0 }));
    BUCKETS_S.forEach((b, i) => { if (seconds <= b) s.counts[i]!++; });
    s.sum += seconds;
    s.count++;
  }
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.series.values()) {
      BUCKETS_S.forEach((b, i) => lines.push(`${this.name}_bucket${fmt({ ...s.labels, le: String(b) })} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${fmt({ ...s.labels, le: "+Inf" })} ${s.count}`);
      lines.push(`${this.name}_sum${fmt(s.labels)} ${s.sum}`, `${this.name}_count${fmt(s.labels)} ${s.count}`);
    }
    return lines.join("\n");
  }
}

export class Metrics {
  readonly events = new Counter("hookbox_events_total", "Events answered, by event and decision");
  readonly hooks = new Counter("hookbox_hooks_total", "Hook runs, by source, sandbox, decision and outcome");
  readonly rejected = new Counter("hookbox_rejected_total", "Requests refused, by HTTP status");
  readonly eventSeconds = new Histogram("hookbox_event_duration_seconds", "Time to answer an event");
  readonly hookSeconds = new Histogram("hookbox_hook_duration_seconds", "Time a hook ran, by sandbox");

  render(gauges: { queueDepth: number; running: number; containers: number; poolReady: number }): string {
    const gauge = (name: string, help: string, value: number) => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${value}`;
    return [
      this.events.render(),
      this.hooks.render(),
      this.rejected.render(),
      this.eventSeconds.render(),
      this.hookSeconds.render(),
      gauge("hookbox_queue_depth", "Events waiting for a slot", gauges.queueDepth),
      gauge("hookbox_events_running", "Events running hooks", gauges.running),
      gauge("hookbox_containers_running", "Container hook runs in flight", gauges.containers),
      gauge("hookbox_pool_ready", "Pre-started containers waiting for a hook", gauges.poolReady),
    ].join("\n\n") + "\n";
  }
}
