// What the transport reports about every request it carried. The fleet's metric recorder and the
// --record writer both implement this; the transport never knows who listens.

import type { EndpointKey } from '../protocol/endpoints.js';

export interface RequestOutcome {
  endpoint: EndpointKey;
  deviceIndex: number;
  method: 'GET' | 'POST';
  path: string;
  /** HTTP status, or 0 when no HTTP answer came (see `error`). */
  status: number;
  /** Set when no HTTP answer came: 'ECONNREFUSED', 'ECONNRESET', 'timeout', ... */
  error?: string;
  /** Clock times in ms: when the request was due (open model), handed to undici, and finished. */
  dueAt: number;
  sentAt: number;
  doneAt: number;
  requestBody?: Uint8Array;
  responseBody?: Uint8Array;
  requestHeaders: Record<string, string>;
  responseHeaders?: Record<string, string | string[] | undefined>;
}

export interface RequestObserver {
  onOutcome(outcome: RequestOutcome): void;
}
