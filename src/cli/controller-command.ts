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
  /** Load-test sink mode (sink-responder.ts) and the share of signatures it verifies ("1%", "0.01"). */
  sink?: boolean;
  verifySample?: string;
}

export async function runControllerCommand(a: ControllerArgs): Promise<number> {
  const problem = controllerArgsProblem(a);
  if (problem) {
    console.error(`evesim controller: ${problem}`);
    return 2;
  }
  const stateDir = resolve(a.stateDir);
  let sink: { verifySample: number } | undefined;
  try {
    sink = a.sink ? { verifySample: parseShare(a.verifySample ?? '1%', '--verify-sample') } : undefined;
  } catch (e) {
    console.error(`evesim controller: ${(e as Error).message}`);
    return 2;
  }
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
      ...(sink ? { sink } : {}),
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

/** "1%", "0.5%", "100%" or a share "0.01" → 0..1; anything else is an error naming the option. */
export function parseShare(raw: string, option: string): number {
  const t = raw.trim();
  const pct = t.endsWith('%');
  const n = Number(pct ? t.slice(0, -1) : t);
  const share = pct ? n / 100 : n;
  if (t === '' || t === '%' || !Number.isFinite(share) || share < 0 || share > 1) {
    throw new Error(`${option} needs a share such as 1%, 100% or 0.01 (0..1), got "${raw}"`);
  }
  return share;
}
