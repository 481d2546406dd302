// Options both controller transports take (the shared v2 pool and the per-device mutual-TLS
// links): where the controller is, how its certificate is checked, and the timers and limits of a
// request. Each transport adds what differs (pool size, client identities, trust of the system
// roots, idle-connection timeout).

export interface ControllerClientOptions {
  /** Controller base URL, e.g. 'https://controller.example:443' (a path prefix is kept). */
  baseUrl: string;
  /** Controller root CA certificate(s), PEM. */
  caPem?: string | readonly string[];
  /** Do not verify the server certificate at all. The caller must warn loudly. Default false. */
  insecureSkipVerify?: boolean;
  /** TLS server name (SNI and verification) when it differs from the URL host. */
  servername?: string;
  /** Whole-request deadline from hand-over to last body byte. Default 120 000 (timer.send.timeout). */
  timeoutMs?: number;
  /** TCP connect plus TLS handshake. Default 10 000 (timer.dial.timeout). */
  connectTimeoutMs?: number;
  /** Larger response bodies fail with TransportError('body-too-large'). Default 16 MiB. */
  maxBodyBytes?: number;
  /** Most TLS handshakes in flight at once (over all connections). Default 16. */
  maxConcurrentConnects?: number;
  /** Random delay bound for connects that are part of a burst. Default 250. */
  connectJitterMs?: number;
  /** OpenSSL cipher string. Default EVE_TLS_CIPHERS. */
  tlsCiphers?: string;
  /** Uniform [0, 1) for connect jitter; injectable for tests. */
  random?: () => number;
}
