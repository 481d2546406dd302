// How many response bytes a request may read, by endpoint: a controller that answers with a huge
// body (a misconfigured proxy, a hostile server) must not make the generator buffer it. The
// transport's own cap (maxBodyBytes, 16 MiB) bounds every request; these are tighter where the
// real answer is small. A larger answer fails as TransportError('body-too-large') and its
// connection is discarded (the rest of the body is never read).
//
//   config                      8 MiB   the whole device configuration (hundreds of apps fit in well under 1 MiB)
//   certs, uuid, attest, register, ping   1 MiB   a few certificates or a small signed message
//   telemetry (info, metrics, logs, flowlog, …)   64 KiB   empty, or newlogs' small ServerMetrics JSON

import type { RequestEndpointKey } from '../device/ports.js';

export const CONFIG_BODY_LIMIT = 8 * 1024 * 1024;
export const SMALL_ANSWER_BODY_LIMIT = 1024 * 1024;
export const TELEMETRY_BODY_LIMIT = 64 * 1024;

/** The most response bytes `endpoint` may read, never above the transport's `transportCap`. */
export function responseBodyLimit(endpoint: RequestEndpointKey, transportCap: number): number {
  let limit: number;
  switch (endpoint) {
    case 'config':
      limit = CONFIG_BODY_LIMIT;
      break;
    case 'certs':
    case 'uuid':
    case 'attest':
    case 'register':
    case 'ping':
      limit = SMALL_ANSWER_BODY_LIMIT;
      break;
    case 'info':
    case 'metrics':
    case 'logs':
    case 'newlogs':
    case 'applogs':
    case 'appnewlogs':
    case 'flowlog':
      limit = TELEMETRY_BODY_LIMIT;
      break;
    default:
      limit = transportCap; // local profile server endpoints: their own client bounds them
  }
  return Math.min(limit, transportCap);
}
