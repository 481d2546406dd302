// The label sets the metrics server creates at 0 before anything happens, so that a query over a
// clean run gives 0 instead of no data: every finding kind, every reliable-message kind, and per
// endpoint the scenario implies (implied-endpoints.ts) a success and the errors most worth an alert.

import type { DeviceFinding } from '../../device/device-options.js';
import type { ReliableKind } from '../../device/sender/device-stats.js';
import type { RequestClass } from './request-class.js';

// Records over the union types, so that a kind added to the type and not here fails to compile.
const FINDING_KIND_SET: Record<DeviceFinding['kind'], true> = {
  'bad-signature': true,
  'unknown-signer': true,
  'bad-envelope': true,
  'undecodable-body': true,
  'undocumented-status': true,
  'wrong-content-type': true,
  'bad-certs': true,
  conformance: true,
};
export const FINDING_KINDS = Object.keys(FINDING_KIND_SET) as DeviceFinding['kind'][];

const RELIABLE_KIND_SET: Record<ReliableKind, true> = { info: true, logs: true, flowlog: true };
export const RELIABLE_KINDS = Object.keys(RELIABLE_KIND_SET) as ReliableKind[];

/** The answer each implied endpoint's request counter and histogram start with. */
export const ZERO_SUCCESS: { code: string; class: RequestClass } = { code: '200', class: '2xx' };

/** Errors each implied endpoint's error counter starts with: a controller failing, refusing
 *  connections, or not answering in time. */
export const ZERO_ERRORS: readonly { code: string; class: RequestClass }[] = [
  { code: '500', class: '5xx' },
  { code: 'ECONNREFUSED', class: 'transport' },
  { code: 'timeout', class: 'transport' },
];
