// The (api, endpoint) pairs a scenario's devices will certainly call, so that the metrics server
// can create their counters at 0 before the first request (a rate or an error ratio on a clean run
// is then 0, not "no data"). Read from each group's settings:
//   both APIs: certs, ping, config, attest (every device runs attestation, with an empty quote
//   without a TPM), info, metrics; register unless the group is pre-registered; logs or newlogs
//   (the group's log format) when devices log; flowlog when the group has apps; applogs or
//   appnewlogs when its apps log;
//   v2 alone: uuid (v1 devices have no /uuid: they find their UUID in the config).
// Local profile server endpoints are left out: which of them a device calls depends on the site's
// profile and its apps; they appear with their first request.

import type { EndpointKey } from '../../protocol/endpoints.js';
import type { GroupSpec } from '../../scenario/scenario-types.js';

export interface ImpliedEndpoint {
  api: 'v1' | 'v2';
  endpoint: EndpointKey;
}

type GroupSettings = Pick<GroupSpec, 'api' | 'preRegistered' | 'logFormat' | 'logLinesPerSec' | 'flowlogIntervalMs' | 'apps'>;

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
    add(g.api, 'certs');
    add(g.api, 'ping');
    if (g.api === 'v2') add('v2', 'uuid');
    if (!g.preRegistered) add(g.api, 'register');
    for (const e of ['config', 'attest', 'info', 'metrics'] as const) add(g.api, e);
    if (g.logLinesPerSec > 0) add(g.api, legacy ? 'logs' : 'newlogs');
    if (g.apps.length > 0 && g.flowlogIntervalMs > 0) add(g.api, 'flowlog');
    if (g.apps.some((a) => a.logLinesPerSec > 0)) add(g.api, legacy ? 'applogs' : 'appnewlogs');
  }
  return out;
}
