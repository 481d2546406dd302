// The subset of the embedded controller's admin client the runner uses. Apart from
// controller-admin.ts (which reads the capability registry to tell controller-side timeline actions
// from the capabilities' own) so that the capabilities, which are handed the client, need not
// import the registry back.

import type { AttestationSpec, GroupSpec } from '../scenario/scenario-types.js';

/** The subset of the controller's admin client the runner uses. */
export interface ControllerAdminApi {
  setFleet(fleet: {
    attestation?: AttestationSpec;
    groups: GroupSpec[];
    devices: { serial: string; group: string; deviceCertPem?: string }[];
  }): Promise<unknown>;
  /** PATCH /admin/fleet: the same body added to the controller's fleet (shards sharing one
   *  controller); with replaceGroups the groups listed are made again from their spec. */
  mergeFleet?(fleet: {
    attestation?: AttestationSpec;
    groups: GroupSpec[];
    devices: { serial: string; group: string; deviceCertPem?: string }[];
    replaceGroups?: boolean;
  }): Promise<unknown>;
  patchGroup(
    name: string,
    patch: {
      configItems?: Record<string, string | null>;
      apps?: Record<string, { activate?: boolean }>;
      controllerEpoch?: boolean;
    },
  ): Promise<unknown>;
  setMaintenance(enabled: boolean): Promise<unknown>;
  /** GET /admin/stats (its `attestation` part feeds the run's attestation outcomes). */
  stats?(): Promise<Record<string, unknown>>;
  /** GET /admin/devices (uuid, serial, group): the devices an LPS command of a group goes to. */
  devices?(page: { offset?: number; limit?: number }): Promise<{ total: number; devices: Record<string, unknown>[] }>;
}
