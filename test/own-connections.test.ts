// The run's figures for devices with connections of their own: summed over workers, and the
// report's "connections" line (absent when every device used the shared v2 pool).

import { describe, expect, it } from 'vitest';
import { ownConnectionsLine } from '../src/runner/own-connections-line.js';
import type { RunSummary } from '../src/runner/summary-json.js';
import { sumOwnConnections, type OwnConnectionFigures } from '../src/transport/own-connection-figures.js';

const fig = (over: Partial<OwnConnectionFigures>): OwnConnectionFigures => ({ devices: 0, connects: 0, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0, ...over });

describe('connections of devices that hold their own', () => {
  it('adds the workers up per route, and is absent when no worker had any', () => {
    expect(sumOwnConnections([undefined, {}])).toBeUndefined();
    const sum = sumOwnConnections([
      { v1: fig({ devices: 3, connects: 7, resumed: 1, certSwitches: 3, deviceRestarts: 1 }) },
      undefined,
      { v1: fig({ devices: 2, connects: 4, failed: 2, certSwitches: 2, connectionsLost: 3 }), v2PerDevice: fig({ devices: 4, connects: 5 }) },
    ]);
    expect(sum).toEqual({
      v1: { devices: 5, connects: 11, resumed: 1, failed: 2, certSwitches: 5, deviceRestarts: 1, connectionsLost: 3 },
      v2PerDevice: { devices: 4, connects: 5, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0 },
    });
  });

  it('reports connects, full handshakes and what caused them in one line', () => {
    const summary = (connections: RunSummary['connections']) => ({ connections }) as RunSummary;
    expect(ownConnectionsLine(summary(undefined))).toBeUndefined();
    expect(ownConnectionsLine(summary({ v1: fig({ devices: 5, connects: 11, resumed: 1, failed: 2, certSwitches: 5, deviceRestarts: 1, connectionsLost: 4 }) }))).toBe(
      'connections  API v1 (mutual TLS) 5 devices: 11 connects, 10 full handshakes, 1 resumed (2 failed, 5 certificate switches, 1 let go with a device that went down, 4 lost to network faults)',
    );
    expect(ownConnectionsLine(summary({ v2PerDevice: fig({ devices: 2, connects: 2 }) }))).toBe('connections  API v2 per-device 2 devices: 2 connects, 2 full handshakes, 0 resumed');
  });
});
