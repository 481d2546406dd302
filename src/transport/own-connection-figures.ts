// What the devices that hold connections of their own (API v1's mutual TLS, and API v2 groups with
// `connection: per-device`) did on the wire over a run: connects, how many resumed a TLS session,
// failed connects, certificate switches and connections let go because their device went down. A
// controller pays a full handshake for every connect that did not resume, so these say what the
// run asked of its TLS side; the shared v2 pool has no per-device connections and is not here.
// Connections lost to network faults are counted too (they reconnect resuming their session).

export interface OwnConnectionFigures {
  /** Devices that opened at least one connection of their own. */
  devices: number;
  /** Completed connects (TCP and TLS handshake), resumed ones included. */
  connects: number;
  /** Connects whose TLS handshake resumed a session. */
  resumed: number;
  /** Connect attempts that failed (refused, reset, TLS verification, timeout). */
  failed: number;
  /** Moves from the onboarding to the device certificate (each a new connection without a session). */
  certSwitches: number;
  /** Times a device went down (reboot, power loss, poweroff) and its connection and session went with it. */
  deviceRestarts: number;
  /** Times a network fault cost a device its connection (it connected again, offering its session). */
  connectionsLost: number;
  /**
   * Of deviceRestarts, connections a power loss left open without a FIN (the controller holds them
   * until it closes them itself); absent in summaries written before it existed.
   */
  abandonedByPowerLoss?: number;
  /**
   * Of connectionsLost, connections a partition (or a blackholed or lost request) left open: the
   * device's FIN went out only when it connected again. Absent in older summaries.
   */
  abandonedByNetwork?: number;
  /** Of connectionsLost, connections a reset fault reset (the controller saw ECONNRESET). Absent in older summaries. */
  resetByNetwork?: number;
}

/** By route: API v1 devices, and API v2 devices of `connection: per-device` groups. */
export interface OwnConnections {
  v1?: OwnConnectionFigures;
  v2PerDevice?: OwnConnectionFigures;
}

/** The workers' figures added up; undefined when none had connections of its own. */
export function sumOwnConnections(list: readonly (OwnConnections | undefined)[]): OwnConnections | undefined {
  const out: OwnConnections = {};
  for (const c of list) {
    for (const route of ['v1', 'v2PerDevice'] as const) {
      const f = c?.[route];
      if (!f) continue;
      const into: Required<OwnConnectionFigures> = (out[route] ??= { devices: 0, connects: 0, resumed: 0, failed: 0, certSwitches: 0, deviceRestarts: 0, connectionsLost: 0, abandonedByPowerLoss: 0, abandonedByNetwork: 0, resetByNetwork: 0 }) as Required<OwnConnectionFigures>;
      // ?? 0: summaries written before connectionsLost or the abandoned and reset counts existed (evesim merge).
      for (const k of Object.keys(into) as (keyof OwnConnectionFigures)[]) into[k] += f[k] ?? 0;
    }
  }
  return out.v1 || out.v2PerDevice ? out : undefined;
}
