// `evesim lps`: one embedded local profile server alone, in the foreground, until Ctrl-C. Devices
// reach it at --host:--port (local_profile_server) with the printed token (profile_server_token);
// the JSON admin API on 127.0.0.1:--admin-port sets profiles and radio silence and issues commands.
import { isLpsEndpoint, LPS_SERVED_ENDPOINTS, type LpsServedEndpoint } from '../servers/lps/lps-endpoints.js';
import { runLpsForeground } from '../servers/lps/lps-foreground.js';

export interface LpsArgs {
  host: string;
  port: number;
  adminPort: number;
  site: string;
  token?: string;
  stateFile?: string;
  profile?: string;
  radioSilence?: boolean;
  throttle?: (string | number)[];
}

export async function runLpsCommand(a: LpsArgs): Promise<number> {
  const throttle: LpsServedEndpoint[] = [];
  for (const t of (a.throttle ?? []).map(String)) {
    if (!isLpsEndpoint(t)) {
      console.error(`evesim lps: --throttle ${t}: not an LPS endpoint; expected one of ${LPS_SERVED_ENDPOINTS.join(', ')}`);
      return 2;
    }
    throttle.push(t);
  }
  try {
    await runLpsForeground({
      host: a.host,
      port: a.port,
      adminPort: a.adminPort,
      siteName: a.site,
      ...(a.token !== undefined ? { token: a.token } : {}),
      ...(a.stateFile !== undefined ? { stateFile: a.stateFile } : {}),
      ...(a.profile !== undefined ? { profile: a.profile } : {}),
      ...(a.radioSilence !== undefined ? { radioSilence: a.radioSilence } : {}),
      throttle,
    });
  } catch (e) {
    console.error(`evesim lps: ${(e as Error).message}`);
    return 2;
  }
  return 0;
}
