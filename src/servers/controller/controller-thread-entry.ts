// Entry of the controller's own thread: starts the servers with the options it was given, reports
// their addresses, and stops when told. Thin on purpose; the logic is in controller-server.ts.

import { serveFromThisThread } from '../server-thread-entry.js';
import { createControllerServer } from './controller-server.js';
import type { FromControllerThread } from './controller-thread-messages.js';

serveFromThisThread('controller-thread-entry', createControllerServer, (server): FromControllerThread & { type: 'ready' } => ({
  type: 'ready',
  url: server.url,
  adminUrl: server.adminUrl,
  ...(server.v1Url ? { v1Url: server.v1Url } : {}),
  rootCaPem: server.rootCaPem,
  rootCaPath: server.rootCaPath,
}));
