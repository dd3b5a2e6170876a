/**
 * @module A few slots for work that holds much for a while, shared fairly between tenants: `atOnce`
 * jobs run at once, all tenants together, and the rest wait, each tenant's in its own line in
 * arrival order. When a job ends, the tenant with the fewest jobs running goes next, ties in turn
 * (round-robin) — so one tenant's flood makes another's job wait for one job to end, never behind
 * the flood. A job that nobody waits for any more leaves its line before it starts (`cancel`).
 * Used for building workspace archives (run/workspace-archive.ts) and for loading stored workspaces
 * (workspace-store.ts).
 */

export interface SlotTurn {
  /** Takes a job that has not started out of its line (true); false once it has started. */
  cancel(): boolean;
}

interface Party {
  running: number;
  /** jobs waiting, in arrival order */
  waiting: Array<() => void>;
}

export class FairSlots {
  private running = 0;
  /** per party (tenant), what it runs and what waits; the Map's order is the round-robin's */
  private readonly parties = new Map<string, Party>();

  constructor(readonly atOnce: number) {}

  /** Runs `job` when a slot is free and it is `party`'s turn — at once when one is free now. */
  enter(party: string, job: () => Promise<void>): SlotTurn {
    const p = this.party(party);
    let started = false;
    const start = () => {
      started = true;
      this.running++;
      p.running++;
      // Served: to the back of the round.
      this.parties.delete(party);
      this.parties.set(party, p);
      // The job answers its own waiters, its failure too: here it only frees its slot.
      const ended = () => {
        this.running--;
        p.running--;
        this.forget(party, p);
        this.dispatch();
      };
      void job().then(ended, ended);
    };
    p.waiting.push(start);
    this.dispatch();
    return {
      cancel: () => {
        if (started) return false;
        const i = p.waiting.indexOf(start);
        if (i >= 0) p.waiting.splice(i, 1);
        this.forget(party, p);
        return true;
      },
    };
  }

  private party(name: string): Party {
    let p = this.parties.get(name);
    if (!p) this.parties.set(name, (p = { running: 0, waiting: [] }));
    return p;
  }

  /** Gives free slots to waiting jobs: the party running the fewest first, ties in turn. */
  private dispatch(): void {
    while (this.running < this.atOnce) {
      let next: Party | undefined;
      for (const p of this.parties.values()) if (p.waiting.length > 0 && (!next || p.running < next.running)) next = p;
      if (!next) return;
      next.waiting.shift()!();
    }
  }

  /** Drops a party's bookkeeping once it neither runs nor waits. */
  private forget(name: string, p: Party): void {
    if (p.running === 0 && p.waiting.length === 0) this.parties.delete(name);
  }
}
