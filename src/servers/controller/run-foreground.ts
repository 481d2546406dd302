// `evesim controller`: the embedded controller as a process of its own, in the foreground, until
// SIGINT or SIGTERM. Prints where it listens and which root CA devices must trust.

import { readFileSync } from 'node:fs';
import { createControllerServer } from './controller-server.js';
import type { ControllerOptions } from './controller-options.js';
import { parseFleetSpec } from './fleet-spec.js';

export interface ForegroundControllerOptions extends Omit<ControllerOptions, 'onboardingCaPems' | 'fleet'> {
  /** Files with trusted onboarding CA certificates (PEM). */
  onboardingCaFiles?: string[];
  /** JSON file with a fleet ({ groups, devices }), as PUT /admin/fleet takes it. */
  fleetFile?: string;
  /** Where to print (default process.stdout). */
  out?: (line: string) => void;
}

/** Runs until SIGINT/SIGTERM; resolves once the servers are closed. */
export async function runControllerForeground(opts: ForegroundControllerOptions): Promise<void> {
  const out = opts.out ?? ((l: string) => process.stdout.write(l + '\n'));
  const onboardingCaPems = (opts.onboardingCaFiles ?? []).map((f) => readText(f, 'onboarding CA file'));
  const fleet = opts.fleetFile ? parseFleetFile(opts.fleetFile) : undefined;
  const { onboardingCaFiles: _a, fleetFile: _b, out: _c, ...rest } = opts;
  const server = await createControllerServer({ ...rest, onboardingCaPems, ...(fleet ? { fleet } : {}) });
  out(`evesim controller listening on ${server.url}  (device API, /api/v2/edgedevice/...)`);
  out(`admin API on ${server.adminUrl}  (GET /admin/stats, /admin/devices; PUT /admin/fleet; ...)`);
  out(`root CA for devices: ${server.rootCaPath}`);
  if (server.v1Url) out(`controller API v1 on ${server.v1Url}  (mutual TLS, /api/v1/edgedevice/...)`);
  const store = server.core.store;
  if (store) out(`registry in ${store.path}: ${server.core.registry.size} devices known from earlier runs`);
  if (opts.sink) {
    out(`SINK MODE: a load-test sink, not a conformance controller: answers from precomputed signed responses, verifies ${+(opts.sink.verifySample * 100).toFixed(3)} % of request signatures`);
  }
  if (onboardingCaPems.length === 0) out('warning: no onboarding CA given: every /register is refused (401); only pre-registered devices can onboard');
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  out('stopping controller');
  await server.stop();
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${what} ${file}: ${(e as Error).message}`);
  }
}

function parseFleetFile(file: string) {
  let json: unknown;
  try {
    json = JSON.parse(readText(file, 'fleet file'));
  } catch (e) {
    throw new Error(`fleet file ${file}: ${(e as Error).message}`);
  }
  try {
    return parseFleetSpec(json);
  } catch (e) {
    throw new Error(`fleet file ${file}: ${(e as Error).message}`);
  }
}
