// `evesim controller`: the embedded controller alone, in the foreground, until Ctrl-C.
import { resolve } from 'node:path';
import { runControllerForeground } from '../servers/controller/run-foreground.js';
import { loadOrCreateOnboardingKit } from './onboarding-kit.js';
import { controllerArgsProblem, type ControllerPorts } from './controller-args.js';

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
  try {
    await runControllerForeground({
      stateDir,
      port: a.port,
      adminPort: a.adminPort,
      v1Port: a.v1Port,
      onboardingCaFiles: caFiles,
      requirePreRegistration: a.requirePreRegistration,
    });
  } catch (e) {
    const busy = listenProblem((e as Error).message, a);
    if (!busy) throw e;
    console.error(`evesim controller: ${busy}`);
    return 2;
  }
  return 0;
}

/** A port that cannot be listened on (taken, not allowed), worded with the flag that chose it. */
function listenProblem(message: string, a: ControllerPorts): string | undefined {
  const m = /^controller: cannot listen on (.*):(\d+): (.*)$/.exec(message);
  if (!m) return undefined;
  const port = Number(m[2]);
  const flag = port === a.port ? '--port' : port === a.adminPort ? '--admin-port' : port === a.v1Port ? '--v1-port' : 'a port';
  return `${flag} ${port}: cannot listen on ${m[1]}:${port} (${m[3]!.replace(/^listen \S+: /, '')})`;
}
