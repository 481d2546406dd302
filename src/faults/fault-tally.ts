// What a worker reports about each fault at the end of the run, and their sum over the workers:
// the devices of its shard the fault hit and the requests it changed.

export interface FaultTally {
  /** The fault's plan id (fault-plan.ts). */
  id: number;
  /** Devices of this worker the fault was planned for. */
  devices: number;
  /** Devices it actually acted on (power-loss and tpm-reset: devices that were up; others: devices with a request it changed). */
  devicesHit: number;
  /** Requests it changed (network faults) or sent on a skewed clock (clock-skew). */
  requests: number;
  /** Network faults with an end: devices hit that got a configuration answer after the window. */
  recovered?: number;
  /** ... and the longest time from the window's end to such a device's first answer, ms. */
  recoveryMs?: number;
}

/** Sums the workers' tallies, fault by fault. */
export function sumFaultTallies(perWorker: readonly (readonly FaultTally[] | undefined)[]): FaultTally[] | undefined {
  const byId = new Map<number, FaultTally>();
  for (const tallies of perWorker) {
    for (const t of tallies ?? []) {
      const sum = byId.get(t.id) ?? { id: t.id, devices: 0, devicesHit: 0, requests: 0 };
      sum.devices += t.devices;
      sum.devicesHit += t.devicesHit;
      sum.requests += t.requests;
      if (t.recovered !== undefined) {
        sum.recovered = (sum.recovered ?? 0) + t.recovered;
        sum.recoveryMs = Math.max(sum.recoveryMs ?? 0, t.recoveryMs ?? 0);
      }
      byId.set(t.id, sum);
    }
  }
  return byId.size === 0 ? undefined : [...byId.values()].sort((a, b) => a.id - b.id);
}
