// Attestation in the runner: the TPM material the workers prepared, the PCR templates the embedded
// controller holds quotes to, and its attestation outcomes, polled during the run (from when the
// fleet is pushed), exported to Prometheus, put into the summary, judged by the attestation
// thresholds and reported. A real controller has no admin API: nothing is started.

import type { ControllerFleet, RunCapability } from '../run-capability.js';
import { AttestationMonitor, attestationReportLines, describeTpmPreparation, measureAttestation } from './attestation-outcomes.js';

export const ATTESTATION_RUN: RunCapability = {
  name: 'attestation',
  measureThreshold: (subject, stat, run) =>
    subject === 'attestation' || subject === 'attestation_devices' ? measureAttestation(subject, stat, run) : undefined,
  reportAfterFacts: (s) => (s.attestation ? attestationReportLines(s.attestation) : []),
  preparedLines(ready) {
    const line = describeTpmPreparation(ready.flatMap((r) => (r.tpm ? [r.tpm] : [])));
    return line ? [line] : [];
  },
  async start(ctx, admin) {
    if (!admin) return undefined;
    const templates = ctx.scenario.attestation;
    const withTemplates = { fleet: (fleet: ControllerFleet) => (templates ? { ...fleet, attestation: templates } : fleet) };
    if (!admin.stats) return withTemplates;
    const stats = admin.stats.bind(admin);
    const monitor = new AttestationMonitor(() => stats(), (m) => ctx.err(`evesim: warning: ${m}\n`));
    ctx.cleanups.add(() => monitor.stop());
    return {
      ...withTemplates,
      registerMetrics: (registry) => monitor.register(registry),
      fleetPushed: () => monitor.start(),
      async summarise(measured) {
        const attestation = await monitor.final();
        if (attestation) measured.attestation = attestation;
      },
    };
  },
};
