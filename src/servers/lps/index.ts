// Public surface of the embedded local profile server.
export { createLpsServer, type LpsServer, type LpsServerExtras } from './lps-server.js';
export { startLpsInThread, type LpsThreadHandle } from './lps-thread.js';
export { runLpsForeground, type LpsForegroundOptions } from './lps-foreground.js';
export type { LpsServerOptions } from './lps-options.js';
export { deviceLpsAddress, type LpsAppCommandName, type LpsDeviceCommandName } from './lps-site.js';
export { LPS_SERVED_ENDPOINTS, type LpsServedEndpoint } from './lps-endpoints.js';
