// Options of an embedded LPS (plain data, so they cross into its worker thread).

import type { LpsServedEndpoint } from './lps-endpoints.js';

export interface LpsServerOptions {
  /** Address the device API listens on. Default 127.0.0.1. */
  host?: string;
  /** Device API port; 0 = any free port (default). `evesim lps` defaults to 8888 as EVE does. */
  port?: number;
  /** Admin API port on 127.0.0.1 (always loopback). 0 = any free port (default). */
  adminPort?: number;
  /** server_token; default: the state file's, else 32 random hex digits. */
  token?: string;
  /** JSON state file (mode 0600) keeping command requests and settings across restarts. None = memory only. */
  stateFile?: string;
  /** Name of the site, for logs. */
  siteName?: string;
  /** Site defaults used when there is no state file yet. */
  profile?: string;
  radioSilence?: boolean;
  throttle?: LpsServedEndpoint[];
  /** Largest device request body. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Completion times are written this long after they were seen (commands are written at once). Default 1000 ms. */
  persistDelayMs?: number;
}

export interface ResolvedLpsOptions {
  host: string;
  port: number;
  adminPort: number;
  token: string | undefined;
  stateFile: string | undefined;
  siteName: string;
  profile: string;
  radioSilence: boolean | undefined;
  throttle: LpsServedEndpoint[];
  maxBodyBytes: number;
  persistDelayMs: number;
}

export function resolveLpsOptions(o: LpsServerOptions): ResolvedLpsOptions {
  const port = o.port ?? 0;
  const adminPort = o.adminPort ?? 0;
  for (const [name, v] of [['port', port], ['adminPort', adminPort]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 65535) throw new Error(`LPS options: ${name} must be an integer 0..65535, got ${v}`);
  }
  if (o.token !== undefined && (typeof o.token !== 'string' || o.token === '')) throw new Error('LPS options: token must be a non-empty string');
  const maxBodyBytes = o.maxBodyBytes ?? 4 * 1024 * 1024;
  if (!(maxBodyBytes > 0)) throw new Error(`LPS options: maxBodyBytes must be positive, got ${maxBodyBytes}`);
  const persistDelayMs = o.persistDelayMs ?? 1000;
  if (!(persistDelayMs >= 0)) throw new Error(`LPS options: persistDelayMs must be >= 0, got ${persistDelayMs}`);
  return {
    host: o.host ?? '127.0.0.1',
    port,
    adminPort,
    token: o.token,
    stateFile: o.stateFile,
    siteName: o.siteName ?? 'site',
    profile: o.profile ?? '',
    radioSilence: o.radioSilence,
    throttle: o.throttle ?? [],
    maxBodyBytes,
    persistDelayMs,
  };
}
