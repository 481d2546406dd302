// What the transport reports about every request it carried. The fleet's metric recorder and the
// --record writer both implement this; the transport never knows who listens.

import type { ExpectReason, RequestEndpointKey } from '../device/ports.js';

export interface RequestOutcome {
  endpoint: RequestEndpointKey;
  deviceIndex: number;
  method: 'GET' | 'POST';
  path: string;
  /** HTTP status, or 0 when no HTTP answer came (see `error`). */
  status: number;
  /** Set when no HTTP answer came: 'ECONNREFUSED', 'ECONNRESET', 'timeout', ..., or UNFINISHED. */
  error?: string;
  /** Set when the status was one the device said it expected (TransportRequest.expect): counted
   *  as an expected rejection, not as an error. */
  expected?: ExpectReason;
  /** Clock times in ms: when the request was due (open model), handed to undici, and finished. */
  dueAt: number;
  sentAt: number;
  doneAt: number;
  requestBody?: Uint8Array;
  responseBody?: Uint8Array;
  requestHeaders: Record<string, string>;
  responseHeaders?: Record<string, string | string[] | undefined>;
}

/** The `error` of a request still waiting for its answer when the run ended (doneAt = the end). */
export const UNFINISHED = 'unfinished';

export interface RequestObserver {
  onOutcome(outcome: RequestOutcome): void;
}
