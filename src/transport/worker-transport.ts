// The transport a worker's devices send through to the controller, as the layers around it see it
// (the fault decorator, the shard runner): besides requests, optional closing and pool figures, and
// for devices with connections of their own (FleetTransport), what happens to those connections
// when a device goes down or a fault breaks one, and their figures so far.

import type { Transport } from '../device/ports.js';
import type { OwnConnections } from './own-connection-figures.js';

/**
 * How a device went down: 'shutdown' (a reboot or poweroff command: EVE's processes exit and the
 * kernel closes their sockets, a FIN each) or 'power-loss' (nothing is sent: the controller keeps
 * the connection until it closes it itself).
 */
export type DeviceDownHow = 'shutdown' | 'power-loss';

/**
 * How a network fault cost a device its connection: 'unreachable' (a partition, a blackholed or
 * lost request: EVE's client closes the connection, but the FIN is lost on the way until the
 * network is back), 'reset' (a reset on the path, which both ends see), or 'closed' (the network
 * carries packets but the request failed, a name that does not resolve or a refused handshake:
 * the FIN arrives).
 */
export type ConnectionLossHow = 'unreachable' | 'reset' | 'closed';

export interface WorkerTransport extends Transport {
  close?(): Promise<void>;
  destroy?(): Promise<void>;
  stats?(): { running: number; queued?: number };
  /** A fault broke this device's connection: a device with one of its own makes a new one, resuming its session. */
  connectionLost?(deviceIndex: number, how?: ConnectionLossHow): void;
  /** The device went down: the connection of its own, if it has one, goes with it, and its session. */
  deviceDown?(deviceIndex: number, how?: DeviceDownHow): void;
  /** Cumulative figures of the devices with connections of their own; undefined: none. */
  ownConnections?(): OwnConnections | undefined;
}
