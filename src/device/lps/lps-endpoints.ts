// The local profile server endpoints a device calls (docs/interfaces.md, eve-wire-facts §11.2,
// §15.1 #7), their metric keys and the counters the LPS agent keeps per endpoint.
//
// These keys are separate from the controller's EndpointKey (src/protocol/endpoints.ts): an LPS is
// another server. TransportRequest.endpoint must accept them for metrics (see lps-agent.ts).

export const LPS_ENDPOINT_KEYS = [
  'lps.local_profile',
  'lps.radio',
  'lps.appinfo',
  'lps.devinfo',
  'lps.location',
  'lps.appbootinfo',
  'lps.network',
] as const;
export type LpsEndpointKey = (typeof LPS_ENDPOINT_KEYS)[number];

export const LPS_API_PREFIX = '/api/v1';

/** Path of each endpoint as EVE sends it. */
export const LPS_PATHS: Readonly<Record<LpsEndpointKey, string>> = {
  'lps.local_profile': `${LPS_API_PREFIX}/local_profile`,
  'lps.radio': `${LPS_API_PREFIX}/radio`,
  'lps.appinfo': `${LPS_API_PREFIX}/appinfo`,
  'lps.devinfo': `${LPS_API_PREFIX}/devinfo`,
  'lps.location': `${LPS_API_PREFIX}/location`,
  'lps.appbootinfo': `${LPS_API_PREFIX}/appbootinfo`,
  'lps.network': `${LPS_API_PREFIX}/network`,
};

export const PROTO_MIME = 'application/x-proto-binary';

/** What happened to the requests of one endpoint. */
export interface LpsEndpointCounters {
  /** Requests handed to the transport. */
  sent: number;
  /** 200/201 answers (whatever their body turned out to be). */
  ok: number;
  /** 204 (and 304) answers. */
  noContent: number;
  notFound: number;
  /** Any other HTTP status (EVE logs an error and keeps its interval). */
  otherStatus: number;
  /** No HTTP answer (TransportError). */
  transportErrors: number;
  /** A body with a server_token different from profile_server_token: ignored. */
  tokenRejected: number;
  /** 200/201 with a body whose Content-Type is not application/x-proto-binary: rejected. */
  badContentType: number;
  /** Body that does not decode as the expected message. */
  undecodable: number;
  /** Answers that arrived after the LPS address changed or the agent stopped: dropped. */
  stale: number;
}

/** Counters of one agent, or shared by every agent of a worker (pass the same object). */
export class LpsAgentStats {
  readonly endpoints: Record<LpsEndpointKey, LpsEndpointCounters>;
  appCommandsAccepted = 0;
  /** Entries skipped by EVE's matching rules (no selector, bad UUID, unknown app, duplicate). */
  appCommandsSkipped = 0;
  appCommandsCompleted = 0;
  deviceCommandsAccepted = 0;
  /** Device commands whose timestamp was already handled (the LPS keeps sending them). */
  deviceCommandsRepeated = 0;
  /** Device commands the device would not take now (deferred, or an unknown command). */
  deviceCommandsRefused = 0;
  radioChangesStarted = 0;
  radioChangesApplied = 0;
  radioChangesFailed = 0;
  /** Radio POSTs skipped because a radio-silence change was in progress. */
  radioPostsSuppressed = 0;
  /** Location POSTs skipped because the LPS throttled the stream (404). */
  locationPostsThrottled = 0;

  constructor() {
    const e = {} as Record<LpsEndpointKey, LpsEndpointCounters>;
    for (const k of LPS_ENDPOINT_KEYS) {
      e[k] = { sent: 0, ok: 0, noContent: 0, notFound: 0, otherStatus: 0, transportErrors: 0, tokenRejected: 0, badContentType: 0, undecodable: 0, stale: 0 };
    }
    this.endpoints = e;
  }

  /** Token rejections over every endpoint. */
  get tokenRejected(): number {
    let n = 0;
    for (const k of LPS_ENDPOINT_KEYS) n += this.endpoints[k].tokenRejected;
    return n;
  }
}
