// The run's figures for devices with connections of their own: summed over workers, the report's
// "connections" line (absent when every device used the shared v2 pool), and the live Prometheus
// counters fed by the workers' deltas (every label set of both APIs, at 0 where a route has none).

import { describe, expect, it } from 'vitest';
import type { FleetDelta } from '../src/fleet/fleet-delta.js';
import { MetricRecorder } from '../src/fleet/metric-recorder.js';
import { FleetAggregate } from '../src/runner/aggregate.js';
import { buildMetricsRegistry } from '../src/runner/metrics-server.js';
import { ownConnectionsLine } from '../src/runner/own-connections-line.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { sumOwnConnections, type OwnConnectionFigures } from '../src/transport/own-connection-figures.js';

const fig = (over: Partial<OwnConnectionFigures>): OwnConnectionFigures => ({ devices: 0, connects: 0, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0, ...over });

/** The exposition's own-connection samples, `name{labels}` to value. */
const ownSeries = (text: string): Record<string, number> =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((l) => /^evesim_device_(connects|connect_failures|connections_dropped)_total\{/.test(l))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))];
      }),
  );

/** Every label set of one API, at the given values (0 where not given). */
const apiSeries = (api: string, v: Partial<Record<'full' | 'resumed' | 'failed' | 'certificate-switch' | 'device-down' | 'network-fault', number>> = {}): Record<string, number> => ({
  [`evesim_device_connects_total{api="${api}",handshake="full"}`]: v.full ?? 0,
  [`evesim_device_connects_total{api="${api}",handshake="resumed"}`]: v.resumed ?? 0,
  [`evesim_device_connect_failures_total{api="${api}"}`]: v.failed ?? 0,
  [`evesim_device_connections_dropped_total{api="${api}",cause="certificate-switch"}`]: v['certificate-switch'] ?? 0,
  [`evesim_device_connections_dropped_total{api="${api}",cause="device-down"}`]: v['device-down'] ?? 0,
  [`evesim_device_connections_dropped_total{api="${api}",cause="network-fault"}`]: v['network-fault'] ?? 0,
});

describe('connections of devices that hold their own', () => {
  it('adds the workers up per route, and is absent when no worker had any', () => {
    expect(sumOwnConnections([undefined, {}])).toBeUndefined();
    const sum = sumOwnConnections([
      { v1: fig({ devices: 3, connects: 7, resumed: 1, certSwitches: 3, deviceRestarts: 1, abandonedByPowerLoss: 1 }) },
      undefined,
      { v1: fig({ devices: 2, connects: 4, failed: 2, certSwitches: 2, connectionsLost: 3, abandonedByNetwork: 2, resetByNetwork: 1 }), v2PerDevice: fig({ devices: 4, connects: 5 }) },
    ]);
    expect(sum).toEqual({
      v1: { devices: 5, connects: 11, resumed: 1, failed: 2, certSwitches: 5, deviceRestarts: 1, connectionsLost: 3, abandonedByPowerLoss: 1, abandonedByNetwork: 2, resetByNetwork: 1 },
      v2PerDevice: { devices: 4, connects: 5, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0, abandonedByPowerLoss: 0, abandonedByNetwork: 0, resetByNetwork: 0 },
    });
  });

  it('reports connects, full handshakes and what caused them in one line', () => {
    const summary = (connections: RunSummary['connections']) => ({ connections }) as RunSummary;
    expect(ownConnectionsLine(summary(undefined))).toBeUndefined();
    expect(ownConnectionsLine(summary({ v1: fig({ devices: 5, connects: 11, resumed: 1, failed: 2, certSwitches: 5, deviceRestarts: 1, connectionsLost: 4 }) }))).toBe(
      'connections  API v1 (mutual TLS) 5 devices: 11 connects, 10 full handshakes, 1 resumed (2 failed, 5 certificate switches, 1 let go with a device that went down, 4 lost to network faults)',
    );
    expect(ownConnectionsLine(summary({ v2PerDevice: fig({ devices: 2, connects: 2 }) }))).toBe('connections  API v2 per-device 2 devices: 2 connects, 2 full handshakes, 0 resumed');
    expect(ownConnectionsLine(summary({ v2PerDevice: fig({ devices: 2, connects: 4, deviceRestarts: 2, abandonedByPowerLoss: 1 }) }))).toBe(
      'connections  API v2 per-device 2 devices: 4 connects, 4 full handshakes, 0 resumed (2 let go with a device that went down, 1 of them left open by a power loss (no FIN; reset when closed))',
    );
    expect(ownConnectionsLine(summary({ v1: fig({ devices: 3, connects: 6, connectionsLost: 4, abandonedByNetwork: 2, resetByNetwork: 1 }) }))).toBe(
      'connections  API v1 (mutual TLS) 3 devices: 6 connects, 6 full handshakes, 0 resumed (4 lost to network faults (2 left open until the network was back, 1 reset))',
    );
  });

  it('are live Prometheus counters, set from the latest delta of each worker (not added up delta by delta), at 0 for an API the run has none on', async () => {
    const agg = new FleetAggregate();
    const registry = buildMetricsRegistry(agg);
    const delta = (workerId: number, ownConnections: FleetDelta['ownConnections']): FleetDelta => ({
      workerId,
      seq: 0,
      final: false,
      atMs: 0,
      intervalMs: 1000,
      ...new MetricRecorder().takeDelta(),
      lifecycle: { idle: 0, 'fetching-certs': 0, registering: 0, uuid: 0, attesting: 0, onboarded: 4, stopped: 0 },
      onboardedEver: 4,
      started: 4,
      shardSize: 4,
      queueBacklog: {},
      undelivered: {},
      loop: { p50Ms: 1, p99Ms: 2, maxMs: 3, utilisation: 0.1 },
      pendingTimers: 0,
      ...(ownConnections ? { ownConnections } : {}),
    });
    // Before any delta, and with a worker whose devices all use the shared v2 pool: every series at 0.
    expect(ownSeries(await registry.metrics())).toEqual({ ...apiSeries('v1'), ...apiSeries('v2') });
    agg.merge(delta(0, undefined));
    expect(ownSeries(await registry.metrics())).toEqual({ ...apiSeries('v1'), ...apiSeries('v2') });
    agg.merge(delta(0, { v1: fig({ devices: 3, connects: 6, resumed: 1, certSwitches: 3 }) }));
    // v1 follows its figures; v2, which the run has none of yet, stays at 0.
    expect(ownSeries(await registry.metrics())).toEqual({ ...apiSeries('v1', { full: 5, resumed: 1, 'certificate-switch': 3 }), ...apiSeries('v2') });
    agg.merge(delta(1, { v1: fig({ devices: 2, connects: 4, failed: 1, deviceRestarts: 1 }), v2PerDevice: fig({ devices: 1, connects: 2, resumed: 1, connectionsLost: 1 }) }));
    // Worker 0 again, later: its figures are absolute, so they replace its earlier ones.
    agg.merge(delta(0, { v1: fig({ devices: 3, connects: 8, resumed: 3, certSwitches: 3, connectionsLost: 2 }) }));
    const text = await registry.metrics();
    // v1 full handshakes: worker 0's latest 8 − 3 and worker 1's 4 − 0 (not worker 0's first 6 − 1 on top).
    expect(text).toContain('evesim_device_connects_total{api="v1",handshake="full"} 9');
    expect(text).toContain('evesim_device_connects_total{api="v1",handshake="resumed"} 3');
    expect(text).toContain('evesim_device_connects_total{api="v2",handshake="full"} 1');
    expect(text).toContain('evesim_device_connect_failures_total{api="v1"} 1');
    expect(text).toContain('evesim_device_connections_dropped_total{api="v1",cause="certificate-switch"} 3');
    expect(text).toContain('evesim_device_connections_dropped_total{api="v1",cause="device-down"} 1');
    expect(text).toContain('evesim_device_connections_dropped_total{api="v1",cause="network-fault"} 2');
    expect(text).toContain('evesim_device_connections_dropped_total{api="v2",cause="network-fault"} 1');
    expect(text).toMatch(/# TYPE evesim_device_connects_total counter/);
  });
});
