// Attestation in the runner: the embedded controller's attestation outcomes, polled during the run
// (from when the fleet is pushed), exported to Prometheus, put into the summary, judged by the
// attestation thresholds and reported. A real controller has no stats API: nothing is started.

import type { RunCapability } from '../run-capability.js';
import { AttestationMonitor, attestationReportLines, measureAttestation } from './attestation-outcomes.js';

export const ATTESTATION_RUN: RunCapability = {
  name: 'attestation',
  measureThreshold: (subject, stat, run) =>
    subject === 'attestation' || subject === 'attestation_devices' ? measureAttestation(subject, stat, run) : undefined,
  reportAfterFacts: (s) => (s.attestation ? attestationReportLines(s.attestation) : []),
  async start(ctx, admin) {
    if (!admin?.stats) return undefined;
    const monitor = new AttestationMonitor(() => admin.stats!(), (m) => ctx.err(`evesim: warning: ${m}\n`));
    ctx.cleanups.add(() => monitor.stop());
    return {
      registerMetrics: (registry) => monitor.register(registry),
      fleetPushed: () => monitor.start(),
      async summarise(measured) {
        const attestation = await monitor.final();
        if (attestation) measured.attestation = attestation;
      },
    };
  },
};
