// `evesim controller`'s flags checked before anything is created: ports that are TCP ports and not
// the same one twice, onboarding CA files that exist and hold certificates, a state directory that
// can be written. Bad input is one line and exit 2, not a stack trace after the PKI is half made.

import { readFileSync } from 'node:fs';
import { pemCertificateProblem } from '../runner/pem-check.js';
import { writableDirProblem } from '../runner/writable-dir.js';

export interface ControllerPorts {
  port: number;
  adminPort: number;
  v1Port: number;
}

export function controllerArgsProblem(a: ControllerPorts & { stateDir: string; onboardCa?: (string | number)[] }): string | undefined {
  const ports = [
    ['--port', a.port],
    ['--admin-port', a.adminPort],
    ['--v1-port', a.v1Port],
  ] as const;
  for (const [flag, p] of ports) {
    if (!Number.isInteger(p) || p < 0 || p > 65535) return `${flag}: ${String(p)} is not a TCP port (0..65535; 0 picks a free one)`;
  }
  for (let i = 0; i < ports.length; i++) {
    for (let j = i + 1; j < ports.length; j++) {
      if (ports[i]![1] !== 0 && ports[i]![1] === ports[j]![1]) return `${ports[i]![0]} and ${ports[j]![0]} are both ${ports[i]![1]}; each listener needs its own port`;
    }
  }
  const dirBad = writableDirProblem(a.stateDir);
  if (dirBad) return `--state-dir ${a.stateDir}: ${dirBad}`;
  for (const f of (a.onboardCa ?? []).map(String)) {
    let pem: string;
    try {
      pem = readFileSync(f, 'utf8');
    } catch (e) {
      return `--onboard-ca ${f}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    }
    const bad = pemCertificateProblem(pem);
    if (bad) return `--onboard-ca ${f}: ${bad}`;
  }
  return undefined;
}
