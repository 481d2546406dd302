// The (api, endpoint) pairs a scenario's devices will certainly call, so that the metrics server
// can create their counters at 0 before the first request (a rate or an error ratio on a clean run
// is then 0, not "no data"). Read from each group's settings:
//   v2: certs, uuid, config, info, metrics; register unless the group is pre-registered;
//   v1: ping, config, info, metrics; register unless pre-registered (v1 has no /certs or /uuid);
//   both: attest when some devices have a TPM (v2); logs or newlogs (the group's log format) when
//   devices log; flowlog when the group has apps; applogs or appnewlogs when its apps log.
// Local profile server endpoints are left out: which of them a device calls depends on the site's
// profile and its apps; they appear with their first request.

import type { EndpointKey } from '../../protocol/endpoints.js';
import type { GroupSpec } from '../../scenario/scenario-types.js';

export interface ImpliedEndpoint {
  api: 'v1' | 'v2';
  endpoint: EndpointKey;
}

type GroupSettings = Pick<GroupSpec, 'api' | 'preRegistered' | 'logFormat' | 'logLinesPerSec' | 'flowlogIntervalMs' | 'apps' | 'tpmShare'>;

export function impliedEndpoints(groups: readonly GroupSettings[]): ImpliedEndpoint[] {
  const seen = new Set<string>();
  const out: ImpliedEndpoint[] = [];
  const add = (api: 'v1' | 'v2', endpoint: EndpointKey) => {
    const key = `${api}|${endpoint}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ api, endpoint });
  };
  for (const g of groups) {
    const legacy = g.logFormat === 'legacy';
    if (g.api === 'v2') {
      add('v2', 'certs');
      add('v2', 'uuid');
    } else {
      add('v1', 'ping');
    }
    if (!g.preRegistered) add(g.api, 'register');
    for (const e of ['config', 'info', 'metrics'] as const) add(g.api, e);
    if (g.api === 'v2' && (g.tpmShare ?? 0) > 0) add('v2', 'attest');
    if (g.logLinesPerSec > 0) add(g.api, legacy ? 'logs' : 'newlogs');
    if (g.apps.length > 0 && g.flowlogIntervalMs > 0) add(g.api, 'flowlog');
    if (g.apps.some((a) => a.logLinesPerSec > 0)) add(g.api, legacy ? 'applogs' : 'appnewlogs');
  }
  return out;
}
