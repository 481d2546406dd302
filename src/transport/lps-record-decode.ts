// Which message a recorded local profile server exchange carries (eve-wire-facts §11.1, §11.2).
// LPS bodies travel bare, without the AuthContainer envelope of controller traffic.

import type { Codec } from '../protocol/codec.js';
import { Msg } from '../protocol/messages.js';
import { LPS_ENDPOINT_KEYS, type LpsEndpointKey } from '../device/lps/lps-endpoints.js';

const LPS_KEYS: ReadonlySet<string> = new Set(LPS_ENDPOINT_KEYS);

export function isLpsEndpointKey(endpoint: string): endpoint is LpsEndpointKey {
  return LPS_KEYS.has(endpoint);
}

/** The message of one direction of an LPS endpoint, or undefined when that direction has no body. */
export function lpsCodecOf(endpoint: LpsEndpointKey, direction: 'request' | 'response'): Codec<unknown> | undefined {
  const c = (x: unknown) => x as Codec<unknown>;
  if (direction === 'request') {
    switch (endpoint) {
      case 'lps.local_profile': return undefined;
      case 'lps.radio': return c(Msg.RadioStatus);
      case 'lps.appinfo': return c(Msg.LocalAppInfoList);
      case 'lps.devinfo': return c(Msg.LocalDevInfo);
      case 'lps.location': return c(Msg.ZInfoLocation);
      case 'lps.appbootinfo': return c(Msg.AppBootInfoList);
      case 'lps.network': return c(Msg.NetworkInfo);
    }
  }
  switch (endpoint) {
    case 'lps.local_profile': return c(Msg.LocalProfile);
    case 'lps.radio': return c(Msg.RadioConfig);
    case 'lps.appinfo': return c(Msg.LocalAppCmdList);
    case 'lps.devinfo': return c(Msg.LocalDevCmd);
    case 'lps.location': return undefined;
    case 'lps.appbootinfo': return c(Msg.AppBootConfigList);
    case 'lps.network': return c(Msg.LocalNetworkConfig);
  }
}
