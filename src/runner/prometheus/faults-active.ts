// The gauge of injected faults:
//   evesim_faults_active{fault="<kind>"}  = devices currently under that fault (0 when none)
// registered by the metrics server with every fault kind at 0 from the start, so that dashboards and
// alerts see 0 rather than nothing on a run without faults. The faults capability, which knows the
// plan and the start instant, gives the registry its reader (setFaultsActiveReader); kinds the
// reader names beyond FAULT_KINDS are exported too.

import { Gauge, type Registry } from 'prom-client';
import { FAULT_KINDS } from '../../faults/fault-spec.js';

export { FAULT_KINDS };

export type FaultsActiveReader = () => Readonly<Record<string, number>>;

/** The reader of each registry's gauge, set by whoever applies the faults (at most one per run). */
const readers = new WeakMap<Registry, FaultsActiveReader>();

export function setFaultsActiveReader(registry: Registry, read: FaultsActiveReader): void {
  readers.set(registry, read);
}

export function registerFaultsActive(registry: Registry, read?: FaultsActiveReader): void {
  if (read) readers.set(registry, read);
  new Gauge({
    name: 'evesim_faults_active',
    help: 'Devices currently under an injected fault, by fault kind (0 when none)',
    labelNames: ['fault'],
    registers: [registry],
    collect() {
      const now = readers.get(registry)?.() ?? {};
      for (const fault of FAULT_KINDS) this.set({ fault }, now[fault] ?? 0);
      for (const [fault, n] of Object.entries(now)) this.set({ fault }, n);
    },
  });
}
