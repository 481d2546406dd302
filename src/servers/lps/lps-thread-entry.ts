// Entry of an LPS's own thread: starts the servers with the options it was given, reports their
// addresses, and stops when told. The logic is in lps-server.ts.

import { serveFromThisThread } from '../server-thread-entry.js';
import { createLpsServer } from './lps-server.js';
import type { FromLpsThread } from './lps-thread-messages.js';

serveFromThisThread('lps-thread-entry', createLpsServer, (server): FromLpsThread & { type: 'ready' } => ({
  type: 'ready',
  url: server.url,
  address: server.address,
  adminUrl: server.adminUrl,
  token: server.token,
}));
