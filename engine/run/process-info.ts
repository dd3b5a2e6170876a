/**
 * @module Who a process is on this machine, beyond its pid (pids are reused): its start time in
 * clock ticks since boot, and the machine's host name and boot id. Used to tell a live owner of a
 * data_dir lock or of a container from a dead one.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/** Field 22 of /proc/<pid>/stat; undefined when the process is gone (or there is no /proc). */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Is process `pid` alive and, when `startTicks` is given, the same process that was? */
export function processAlive(pid: number, startTicks?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined ? !hasProc() : now === startTicks;
}

function hasProc(): boolean {
  return processStartTicks(process.pid) !== undefined;
}

function machine(): string {
  let boot = "";
  try {
    boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch { /* no /proc: the host name alone */ }
  return `${hostname()}/${boot}`;
}

/** This process: "<host>/<boot id>/<pid>/<start ticks>". */
export function thisProcess(): string {
  return `${machine()}/${process.pid}/${processStartTicks(process.pid) ?? ""}`;
}

/**
 * Whether the process a label names is alive: true or false when it ran on this machine (same
 * host name and boot), undefined when that cannot be told from here.
 */
export function labelledProcessAlive(label: string | undefined): boolean | undefined {
  if (!label) return undefined;
  const at = label.lastIndexOf("/", label.lastIndexOf("/") - 1);
  if (at < 0 || label.slice(0, at) !== machine()) return undefined;
  const [pid, ticks] = label.slice(at + 1).split("/");
  return processAlive(Number(pid), ticks || undefined);
}
