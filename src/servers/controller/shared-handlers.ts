// The request handlers API v1 and v2 share: once a request is authenticated (v2: its envelope; v1:
// its client certificate), uuid, attest and the telemetry endpoints are handled alike. Register,
// ping, certs and config have rules of their own in each API.

import type { ControllerContext, Reply, RequestState } from './controller-context.js';
import { handleAttest } from './handle-attest.js';
import { handleNewlogs } from './handle-newlogs.js';
import { handleAppLogs, handleFlowlog, handleInfo, handleLogs, handleMetrics } from './handle-telemetry.js';
import { handleUuid } from './handle-uuid.js';

export type Handler = (ctx: ControllerContext, req: RequestState) => Reply;

export const SHARED_HANDLERS = {
  uuid: handleUuid,
  attest: handleAttest,
  info: handleInfo,
  metrics: handleMetrics,
  logs: handleLogs,
  applogs: handleAppLogs,
  newlogs: handleNewlogs,
  appnewlogs: handleNewlogs,
  flowlog: handleFlowlog,
} satisfies Record<string, Handler>;

/** The shared handler of `endpoint`, if it has one. */
export function sharedHandler(endpoint: string): Handler | undefined {
  return Object.hasOwn(SHARED_HANDLERS, endpoint) ? SHARED_HANDLERS[endpoint as keyof typeof SHARED_HANDLERS] : undefined;
}
