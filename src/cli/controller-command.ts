// `evesim controller`: the embedded controller alone, in the foreground, until Ctrl-C.
import { resolve } from 'node:path';
import { runControllerForeground } from '../servers/controller/run-foreground.js';
import { loadOrCreateOnboardingKit } from './onboarding-kit.js';

export interface ControllerArgs {
  port: number;
  adminPort: number;
  stateDir: string;
  onboardCa?: (string | number)[];
  requirePreRegistration: boolean;
  /** Load-test sink mode (sink-responder.ts) and the share of signatures it verifies ("1%", "0.01"). */
  sink?: boolean;
  verifySample?: string;
}

export async function runControllerCommand(a: ControllerArgs): Promise<number> {
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
  await runControllerForeground({
    stateDir,
    port: a.port,
    adminPort: a.adminPort,
    onboardingCaFiles: caFiles,
    requirePreRegistration: a.requirePreRegistration,
    ...(sink ? { sink } : {}),
  });
  return 0;
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
