// Where the embedded controller points a device at its site's local profile server: a group a
// site serves carries GroupSpec.lps (port and token, set by the runner); each of its devices (or
// the share the site serves, by serial) gets local_profile_server = '<uuid>.lps.invalid:<port>',
// the form by which the embedded LPS tells devices apart from their first request (lps-site.ts),
// and profile_server_token = the site's token.

import type { GroupLpsSpec } from '../../scenario/lps/lps-scenario-types.js';
import { inLpsShare } from '../../scenario/lps/lps-share.js';
import type { GroupSpec } from '../../scenario/scenario-types.js';
import { deviceLpsAddress } from '../lps/lps-site.js';
import { AdminInputError } from './config-overlay.js';

const NONE = { address: '', token: '' };

/** local_profile_server and profile_server_token of one device ('' when its group has no LPS). */
export function lpsServerFor(spec: GroupSpec, dev: { uuid: string; serial: string }): { address: string; token: string } {
  const lps = spec.lps;
  if (lps === undefined || !inLpsShare(dev.serial, lps.share)) return NONE;
  return { address: deviceLpsAddress(dev.uuid, lps.port), token: lps.token };
}

/** Checks GroupSpec.lps in a PUT /admin/fleet body; errors name the field. */
export function parseGroupLps(raw: unknown, f: string): GroupLpsSpec {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AdminInputError(f, 'must be a JSON object {port, token, share}');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'port' && k !== 'token' && k !== 'share') throw new AdminInputError(`${f}.${k}`, 'unknown field');
  if (typeof o.port !== 'number' || !Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw new AdminInputError(`${f}.port`, 'must be a TCP port 1..65535');
  if (typeof o.token !== 'string') throw new AdminInputError(`${f}.token`, 'must be a string');
  const share = o.share === undefined ? 1 : o.share;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new AdminInputError(`${f}.share`, 'must be a number in (0, 1]');
  return { port: o.port, token: o.token, share };
}
