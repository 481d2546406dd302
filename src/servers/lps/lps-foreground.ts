// `evesim lps`: one embedded LPS in the foreground until SIGINT/SIGTERM. Prints where it listens
// and the token devices need (never a private key: an LPS has none).

import { createLpsServer } from './lps-server.js';
import type { LpsServerOptions } from './lps-options.js';

export interface LpsForegroundOptions extends LpsServerOptions {
  /** Where to print. Default process.stdout. */
  out?: { write(s: string): unknown };
  /** Resolves to stop (tests); default: the first SIGINT or SIGTERM. */
  until?: Promise<unknown>;
}

export async function runLpsForeground(opts: LpsForegroundOptions = {}): Promise<void> {
  const { out = process.stdout, until, ...serverOpts } = opts;
  const server = await createLpsServer({ port: 8888, ...serverOpts });
  out.write(
    `evesim lps ${serverOpts.siteName ?? 'site'}\n` +
      `  device API   ${server.url}   (local_profile_server: ${server.address})\n` +
      `  admin API    ${server.adminUrl}/admin/site\n` +
      `  token        ${server.token}   (profile_server_token)\n` +
      `  state file   ${serverOpts.stateFile ?? '(none: commands are lost on restart)'}\n`,
  );
  await (until ??
    new Promise<void>((resolve) => {
      const done = () => {
        process.off('SIGINT', done);
        process.off('SIGTERM', done);
        resolve();
      };
      process.on('SIGINT', done);
      process.on('SIGTERM', done);
    }));
  await server.stop();
  out.write('evesim lps: stopped\n');
}
