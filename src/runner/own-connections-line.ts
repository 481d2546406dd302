// The report's "connections" line: what the devices with connections of their own (API v1's mutual
// TLS, v2 groups with `connection: per-device`) asked of the controller's TLS side. Every connect
// that did not resume a session was a full handshake there.

import type { OwnConnectionFigures } from '../transport/own-connection-figures.js';
import type { RunSummary } from './summary-json.js';

export function ownConnectionsLine(s: RunSummary): string | undefined {
  const c = s.connections;
  if (!c) return undefined;
  const parts: string[] = [];
  if (c.v1) parts.push(`API v1 (mutual TLS) ${describe(c.v1)}`);
  if (c.v2PerDevice) parts.push(`API v2 per-device ${describe(c.v2PerDevice)}`);
  return parts.length > 0 ? `connections  ${parts.join('; ')}` : undefined;
}

function describe(f: OwnConnectionFigures): string {
  const full = f.connects - f.resumed;
  const extra = [
    f.failed > 0 ? `${f.failed} failed` : '',
    f.certSwitches > 0 ? `${f.certSwitches} certificate switches` : '',
    f.deviceRestarts > 0 ? `${f.deviceRestarts} let go with a device that went down${abandoned(f)}` : '',
    f.connectionsLost > 0 ? `${f.connectionsLost} lost to network faults${lostHow(f)}` : '',
  ].filter((x) => x !== '');
  return `${f.devices} devices: ${f.connects} connects, ${full} full handshakes, ${f.resumed} resumed` + (extra.length > 0 ? ` (${extra.join(', ')})` : '');
}

/** ", 3 of them left open by a power loss (no FIN; reset when closed)" when any were. */
function abandoned(f: OwnConnectionFigures): string {
  const n = f.abandonedByPowerLoss ?? 0;
  return n > 0 ? `, ${n} of them left open by a power loss (no FIN; reset when closed)` : '';
}

/** " (2 left open until the network was back, 1 reset)" when any were. */
function lostHow(f: OwnConnectionFigures): string {
  const how = [
    (f.abandonedByNetwork ?? 0) > 0 ? `${f.abandonedByNetwork} left open until the network was back` : '',
    (f.resetByNetwork ?? 0) > 0 ? `${f.resetByNetwork} reset` : '',
  ].filter((x) => x !== '');
  return how.length > 0 ? ` (${how.join(', ')})` : '';
}
