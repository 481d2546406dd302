// Whether a --metrics-host can be listened on as given: an IP address (127.0.0.1, 0.0.0.0, ::) or a
// host name, not a URL or a host:port, so a typo is exit 2 before anything starts rather than a
// failed listen after the fleet's identities are made.

import { isIP } from 'node:net';

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

export function listenHostProblem(host: string): string | undefined {
  if (isIP(host) !== 0 || HOST_NAME.test(host)) return undefined;
  return `"${host}" is not an IP address or host name (e.g. 127.0.0.1, 0.0.0.0, ::)`;
}
