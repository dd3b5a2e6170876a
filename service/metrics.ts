/**
 * @module `/metrics` with prom-client, one registry per service instance: events, hooks by
 * source/decision/outcome, latency histograms, queue depth, containers running (names and labels as
 * before prom-client, so dashboards keep working), prom-client's process and Node metrics, and an
 * event-loop-lag histogram — the figure that shows a stalled service.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { EngineStats } from "../engine/index.js";

/** Seconds; from 5 ms (an event matching no hook) to 60 s (a slow container hook). */
const BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds of event-loop lag: a healthy loop is under a millisecond; a second means every tenant waited. */
const LAG_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** @default 100 ms — how often the loop's lag is sampled: a stall this long or longer is seen */
export const LAG_SAMPLE_MS = 100;
/**
 * @default 1 s — scrapes of `/metrics` this close to one another share one rendering. Rendering reads
 * every series and /proc (1–2 ms of the loop, several with thousands of open connections): a flood
 * of scrapes with one token would otherwise buy that much of the one thread every tenant is served by,
 * each. A scraper sees figures at most this old.
 */
export const METRICS_RENDER_EVERY_MS = 1_000;

export class Metrics {
  readonly registry = new Registry();
  readonly events = new Counter({ name: "hookbox_events_total", help: "Events answered, by event and decision", labelNames: ["event", "decision"] as const, registers: [this.registry] });
  readonly hooks = new Counter({ name: "hookbox_hooks_total", help: "Hook runs, by source, sandbox, decision and outcome", labelNames: ["source", "sandbox", "decision", "outcome"] as const, registers: [this.registry] });
  readonly auditErrors = new Counter({ name: "hookbox_audit_errors_total", help: "Audit lines that could not be written (the event was still answered)", registers: [this.registry] });
  readonly auditLate = new Counter({ name: "hookbox_audit_late_total", help: "Events answered before their audit line was written: the disk took longer than AUDIT_WAIT_MS (the line is written when it takes it)", registers: [this.registry] });
  readonly logDrops = new Counter({ name: "hookbox_log_lines_dropped_total", help: "Log lines dropped: stdout did not take them while LOG_BUFFER_BYTES were waiting", registers: [this.registry] });
  readonly connectionsDropped = new Counter({ name: "hookbox_connections_dropped_total", help: "Connections closed as they came: max_connections were open", registers: [this.registry] });
  readonly rejected = new Counter({ name: "hookbox_rejected_total", help: "Requests refused, by HTTP status", labelNames: ["status"] as const, registers: [this.registry] });
  readonly eventSeconds = new Histogram({ name: "hookbox_event_duration_seconds", help: "Time to answer an event", buckets: BUCKETS_S, registers: [this.registry] });
  readonly hookSeconds = new Histogram({ name: "hookbox_hook_duration_seconds", help: "Time a hook ran, by sandbox", labelNames: ["sandbox"] as const, buckets: BUCKETS_S, registers: [this.registry] });
  readonly loopLag = new Histogram({ name: "hookbox_event_loop_lag_seconds", help: `How late a ${LAG_SAMPLE_MS} ms timer fired: the event loop's lag`, buckets: LAG_BUCKETS_S, registers: [this.registry] });
  private readonly sampler: NodeJS.Timeout;
  /** the last rendering, and when it began */
  private last: { at: number; text: Promise<string> } | undefined;

  /**
   * `stats`: the engine's figures, read at each rendering for the gauges; `residentHookBytes`: the
   * workspace store's; `renderEveryMs`: METRICS_RENDER_EVERY_MS unless given.
   */
  constructor(stats: () => EngineStats, residentHookBytes: () => number = () => 0, private readonly renderEveryMs = METRICS_RENDER_EVERY_MS) {
    collectDefaultMetrics({ register: this.registry });
    const gauge = (name: string, help: string, read: (s: EngineStats) => number) =>
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(read(stats())); } });
    gauge("hookbox_queue_depth", "Events waiting for a slot", (s) => s.queued);
    gauge("hookbox_events_running", "Events running hooks", (s) => s.running);
    gauge("hookbox_containers_running", "Container hook runs in flight", (s) => s.containers);
    gauge("hookbox_pool_ready", "Pre-started containers waiting for a hook", (s) => s.poolReady);
    gauge("hookbox_workspace_hooks_resident_bytes", "What the stored workspaces' hook sets held in memory take, as reckoned against MAX_RESIDENT_HOOK_BYTES", () => residentHookBytes());

    let due = performance.now() + LAG_SAMPLE_MS;
    this.sampler = setInterval(() => {
      const now = performance.now();
      this.loopLag.observe(Math.max(0, now - due) / 1000);
      due = now + LAG_SAMPLE_MS;
    }, LAG_SAMPLE_MS).unref();
  }

  /** The exposition's media type (Prometheus text 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition: rendered anew once the last rendering is `renderEveryMs` old, else that one. */
  render(): Promise<string> {
    const now = performance.now();
    if (this.last === undefined || now - this.last.at >= this.renderEveryMs) {
      const text = this.registry.metrics();
      this.last = { at: now, text };
      // a rendering that failed is not kept: the next scrape tries again
      text.catch(() => {
        if (this.last?.text === text) this.last = undefined;
      });
    }
    return this.last.text;
  }

  /** Stops the lag sampler (it never holds the process open). */
  close(): void {
    clearInterval(this.sampler);
  }
}
