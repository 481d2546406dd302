// The transport a worker's devices use, routed per group: API v2 groups share one pooled
// ControllerTransport (the default: v2 needs no client certificate, so sharing saves a TLS context
// and a socket per device) or, with `connection: per-device`, get a connection of their own; API
// v1 groups always get a connection of their own, carrying the device's client certificate, on
// the controller's v1 address. Each underlying transport is made only when a group needs it.

import type { DeviceIdentity } from '../identity/device-identity.js';
import type { Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { ControllerTransport } from '../transport/controller-transport.js';
import { PerDeviceTransport, type PerDeviceTransportStats } from '../transport/mtls-transport.js';
import type { FleetLayout } from './fleet-layout.js';
import type { ShardTask } from './worker-protocol.js';
import { shardLocal } from './arrival-schedule.js';
import type { OwnConnections } from '../transport/own-connection-figures.js';
import type { ConnectionLossHow, DeviceDownHow } from '../transport/worker-transport.js';

type Route = 'shared' | 'v2-per-device' | 'v1';

export interface FleetTransportStats {
  running: number;
  queued: number;
  /** Per-device connections of v1 devices and of v2 devices that asked for them. */
  v1?: PerDeviceTransportStats;
  v2PerDevice?: PerDeviceTransportStats;
}

export class FleetTransport implements Transport {
  private readonly routes: Route[];
  private readonly shared: ControllerTransport | undefined;
  private readonly v2PerDevice: PerDeviceTransport | undefined;
  private readonly v1: PerDeviceTransport | undefined;

  /** `identities[local]` is the identity of the shard's local device `local` (filled before the run). */
  constructor(
    task: ShardTask,
    private readonly layout: FleetLayout,
    identities: readonly DeviceIdentity[],
  ) {
    this.routes = layout.groups.map((g): Route => (g.api === 'v1' ? 'v1' : g.connection === 'per-device' ? 'v2-per-device' : 'shared'));
    const { target, shard } = task;
    // No root CA ('': --insecure-skip-verify without --root-ca): TLS is not verified anyway.
    const common = { ...(target.rootCaPem !== '' ? { caPem: target.rootCaPem } : {}), insecureSkipVerify: target.insecure };
    if (this.routes.includes('shared')) this.shared = new ControllerTransport({ baseUrl: target.url, ...common });
    if (this.routes.includes('v2-per-device')) this.v2PerDevice = new PerDeviceTransport({ baseUrl: target.url, ...common });
    if (this.routes.includes('v1')) {
      this.v1 = new PerDeviceTransport({
        baseUrl: target.v1Url ?? target.url,
        ...common,
        identityOf: (index) => identities[shardLocal(shard, index)],
      });
    }
  }

  request(req: TransportRequest): Promise<TransportResponse> {
    switch (this.routes[this.layout.groupOf(req.deviceIndex)]) {
      case 'v1':
        return this.v1!.request(req);
      case 'v2-per-device':
        return this.v2PerDevice!.request(req);
      default:
        return this.shared!.request(req);
    }
  }

  /**
   * The device went down (reboot, power loss): its own connection, if it has one, goes with it
   * (closed after a command, left without a FIN after a power loss).
   * Devices on the shared v2 pool have no connection of their own to lose (a simulator economy:
   * real devices each hold one), so nothing changes for them.
   */
  deviceDown(deviceIndex: number, how: DeviceDownHow = 'shutdown'): void {
    this.ownConnectionsOf(deviceIndex)?.deviceDown(deviceIndex, how);
  }

  /** A network fault broke the device's connection: its own connection, if it has one, is made again (resuming its session). */
  connectionLost(deviceIndex: number, how: ConnectionLossHow = 'closed'): void {
    this.ownConnectionsOf(deviceIndex)?.connectionLost(deviceIndex, how);
  }

  /** The cumulative figures of the devices with connections of their own; undefined when the worker has none. */
  ownConnections(): OwnConnections | undefined {
    if (!this.v1 && !this.v2PerDevice) return undefined;
    return {
      ...(this.v1 ? { v1: this.v1.ownConnectionFigures() } : {}),
      ...(this.v2PerDevice ? { v2PerDevice: this.v2PerDevice.ownConnectionFigures() } : {}),
    };
  }

  /** The per-device transport of the device's group; undefined for the shared v2 pool. */
  private ownConnectionsOf(deviceIndex: number): PerDeviceTransport | undefined {
    const route = this.routes[this.layout.groupOf(deviceIndex)];
    return route === 'v1' ? this.v1 : route === 'v2-per-device' ? this.v2PerDevice : undefined;
  }

  stats(): FleetTransportStats {
    const shared = this.shared?.stats();
    const v2PerDevice = this.v2PerDevice?.stats();
    const v1 = this.v1?.stats();
    const out: FleetTransportStats = { running: 0, queued: 0 };
    for (const p of [shared, v2PerDevice, v1]) {
      if (!p) continue;
      out.running += p.running;
      out.queued += p.queued;
    }
    if (v1) out.v1 = v1;
    if (v2PerDevice) out.v2PerDevice = v2PerDevice;
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([this.shared?.close(), this.v2PerDevice?.close(), this.v1?.close()]);
  }

  async destroy(): Promise<void> {
    await Promise.all([this.shared?.destroy(), this.v2PerDevice?.destroy(), this.v1?.destroy()]);
  }
}
