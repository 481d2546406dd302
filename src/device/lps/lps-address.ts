// Where a device finds its local profile server: the `local_profile_server` string of EdgeDevConfig
// turned into host, port and base URL the way EVE does it (pkg/pillar/localcommand makeLpsBaseURL,
// eve-wire-facts §11.2): split host and port as Go's net.SplitHostPort does; no port, or an empty
// one, means 8888; the scheme is always plain http.

export const DEFAULT_LPS_PORT = 8888;

export interface LpsAddress {
  /** Host name or IP literal without brackets, e.g. '10.1.0.2', 'fd00::2', 'lps.site'. */
  host: string;
  port: number;
  /** host:port as it goes into the Host header (IPv6 in brackets). */
  hostPort: string;
  /** 'http://' + hostPort. */
  baseUrl: string;
}

export class LpsAddressError extends Error {
  override readonly name = 'LpsAddressError';
}

/** Parses `local_profile_server`. Throws LpsAddressError naming the bad value (an empty value too). */
export function parseLpsAddress(raw: string): LpsAddress {
  const value = raw.trim();
  if (value === '') throw new LpsAddressError('local_profile_server is empty: there is no LPS to talk to');
  let host: string;
  let portText: string;
  const split = splitHostPort(value);
  if (split === undefined) {
    // Like EVE: when SplitHostPort fails (no port, or a bare IPv6 address) the whole value is the host.
    host = value;
    portText = '';
  } else {
    [host, portText] = split;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '' || /[\s/?#@]/.test(host)) {
    throw new LpsAddressError(`local_profile_server ${JSON.stringify(raw)}: host ${JSON.stringify(host)} is not a host name or IP address`);
  }
  let port = DEFAULT_LPS_PORT;
  if (portText !== '') {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      throw new LpsAddressError(`local_profile_server ${JSON.stringify(raw)}: port ${JSON.stringify(portText)} is not a number in 1..65535`);
    }
    port = Number(portText);
  }
  const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, hostPort, baseUrl: `http://${hostPort}` };
}

/** Go net.SplitHostPort: 'h:p' or '[v6]:p'; undefined when it would fail (missing port, too many colons). */
function splitHostPort(s: string): [string, string] | undefined {
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0 || s[end + 1] !== ':') return undefined;
    return [s.slice(1, end), s.slice(end + 2)];
  }
  const i = s.lastIndexOf(':');
  if (i < 0 || s.indexOf(':') !== i) return undefined;
  return [s.slice(0, i), s.slice(i + 1)];
}
