// CONTRACT for fault injection (issue 12 §2, built elsewhere): the gauge
//   evesim_faults_active{fault="<kind>"}  = devices currently under that fault (0 when none)
// is registered here, with every known kind at 0 from the start so that dashboards and alerts see
// 0 rather than nothing on a run without faults. Whoever applies faults hands the metrics server a
// reader (MetricsRunInfo.faultsActive) returning the current count per kind; kinds it names that
// are not listed below are exported too.

import { Gauge, type Registry } from 'prom-client';

export const FAULT_KINDS = [
  'partition',
  'blackhole',
  'latency',
  'loss',
  'reset',
  'dns-failure',
  'tls-failure',
  'clock-skew',
  'power-loss',
  'tpm-reset',
] as const;

export type FaultsActiveReader = () => Readonly<Record<string, number>>;

export function registerFaultsActive(registry: Registry, read: FaultsActiveReader = () => ({})): void {
  new Gauge({
    name: 'evesim_faults_active',
    help: 'Devices currently under an injected fault, by fault kind (0 when none)',
    labelNames: ['fault'],
    registers: [registry],
    collect() {
      const now = read();
      for (const fault of FAULT_KINDS) this.set({ fault }, now[fault] ?? 0);
      for (const [fault, n] of Object.entries(now)) this.set({ fault }, n);
    },
  });
}
