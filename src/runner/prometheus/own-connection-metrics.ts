// Prometheus counters of the devices with connections of their own (API v1's mutual TLS, v2 groups
// with `connection: per-device`), live during the run: what a reboot storm or the end of a network
// fault asks of the controller's TLS side as it happens.
//
//   evesim_device_connects_total{api,handshake="full"|"resumed"}
//   evesim_device_connect_failures_total{api}
//   evesim_device_connections_dropped_total{api,cause="certificate-switch"|"device-down"|"network-fault"}
//
// The workers send their cumulative figures with every delta (FleetAggregate.ownConnections), so
// each collect sets the counters to the latest sums. Every label set of both APIs is there from the
// first scrape, at 0 for a route the run has no such devices on (all of them when every device uses
// the shared v2 pool): rate() then reads 0 rather than nothing, and a dashboard panel has data.

import { Counter, type Registry } from 'prom-client';
import type { FleetAggregate } from '../aggregate.js';
import type { OwnConnectionFigures, OwnConnections } from '../../transport/own-connection-figures.js';

const ROUTES: readonly { route: keyof OwnConnections; api: string }[] = [
  { route: 'v1', api: 'v1' },
  { route: 'v2PerDevice', api: 'v2' },
];

/** A route the run has no such devices on: its label sets are exported at 0, not left out. */
const NONE: OwnConnectionFigures = { devices: 0, connects: 0, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0 };

export function registerOwnConnectionMetrics(registry: Registry, agg: Pick<FleetAggregate, 'ownConnections'>): void {
  /** Sets `counter` to `value(figures)` for each route, the zero figures for a route the run lacks. */
  const latest = (counter: Counter<string>, labels: (api: string) => Record<string, string>[], value: (f: OwnConnectionFigures, i: number) => number): void => {
    const all = agg.ownConnections();
    counter.reset();
    for (const { route, api } of ROUTES) {
      const f = all?.[route] ?? NONE;
      labels(api).forEach((l, i) => counter.inc(l, value(f, i)));
    }
  };
  new Counter({
    name: 'evesim_device_connects_total',
    help: 'Connects of devices with connections of their own (API v1, v2 per-device), by API and TLS handshake: full, or resumed from a session',
    labelNames: ['api', 'handshake'],
    registers: [registry],
    collect() {
      latest(this, (api) => [{ api, handshake: 'full' }, { api, handshake: 'resumed' }], (f, i) => (i === 0 ? f.connects - f.resumed : f.resumed));
    },
  });
  new Counter({
    name: 'evesim_device_connect_failures_total',
    help: 'Failed connects (refused, reset, TLS verification, timeout) of devices with connections of their own, by API',
    labelNames: ['api'],
    registers: [registry],
    collect() {
      latest(this, (api) => [{ api }], (f) => f.failed);
    },
  });
  const causes = ['certificate-switch', 'device-down', 'network-fault'] as const;
  new Counter({
    name: 'evesim_device_connections_dropped_total',
    help: 'Connections of their own that devices let go, by API and cause: a move from the onboarding to the device certificate, the device going down (reboot, power loss), a network fault',
    labelNames: ['api', 'cause'],
    registers: [registry],
    collect() {
      latest(
        this,
        (api) => causes.map((cause) => ({ api, cause })),
        (f, i) => [f.certSwitches, f.deviceRestarts, f.connectionsLost][i]!,
      );
    },
  });
}
