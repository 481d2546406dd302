// `evesim controller`: the embedded controller alone, in the foreground, until Ctrl-C.
import { resolve } from 'node:path';
import { runControllerForeground } from '../servers/controller/run-foreground.js';
import { loadOrCreateOnboardingKit } from './onboarding-kit.js';
import { controllerArgsProblem } from './controller-args.js';

export interface ControllerArgs {
  port: number;
  adminPort: number;
  /** Controller API v1 (mutual TLS) listener port; 0 picks a free one. */
  v1Port: number;
  stateDir: string;
  onboardCa?: (string | number)[];
  requirePreRegistration: boolean;
}

export async function runControllerCommand(a: ControllerArgs): Promise<number> {
  const problem = controllerArgsProblem(a);
  if (problem) {
    console.error(`evesim controller: ${problem}`);
    return 2;
  }
  const stateDir = resolve(a.stateDir);
  let caFiles = (a.onboardCa ?? []).map(String);
  if (caFiles.length === 0) {
    const kit = loadOrCreateOnboardingKit(stateDir);
    caFiles = [kit.caFile];
    console.log(`onboarding credentials for devices: --onboard-cert ${kit.certFile} --onboard-key ${kit.keyFile}`);
  }
  await runControllerForeground({
    stateDir,
    port: a.port,
    adminPort: a.adminPort,
    v1Port: a.v1Port,
    onboardingCaFiles: caFiles,
    requirePreRegistration: a.requirePreRegistration,
  });
  return 0;
}
