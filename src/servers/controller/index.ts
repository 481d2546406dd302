// Public API of the embedded controller.

export { createControllerServer, type ControllerServer, type ControllerExtras } from './controller-server.js';
export { startControllerInThread, type ControllerThread } from './controller-thread.js';
export { runControllerForeground, type ForegroundControllerOptions } from './run-foreground.js';
export { ControllerAdminClient, AdminClientError } from './controller-admin-client.js';
export type { ControllerOptions } from './controller-options.js';
export type { FleetSpec, FleetDevice } from './fleet-spec.js';
export type { ConfigPatch } from './config-overlay.js';
export type { QuoteVerifier, QuoteVerificationInput, QuoteVerdict } from './quote-verifier.js';
export { appObjectUuids } from './derived-uuid.js';
