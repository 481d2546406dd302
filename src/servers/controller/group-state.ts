// One device group as served: its GroupSpec from the fleet plus the changes made to it while the
// run goes on. Its overlay version comes from the controller-wide counter (config-overlay.ts).

import type { GroupSpec } from '../../scenario/scenario-types.js';
import { emptyOverlay, nextConfigVersion, type ConfigOverlay } from './config-overlay.js';
import { EVESIM_NAMESPACE, uuidV5 } from './derived-uuid.js';

export class GroupState {
  readonly overlay: ConfigOverlay = emptyOverlay();
  readonly appNames: ReadonlySet<string>;
  /** project_id served in the config: stable per group name. */
  readonly projectId: string;

  constructor(readonly spec: GroupSpec) {
    this.appNames = new Set(spec.apps.map((a) => a.name));
    this.projectId = uuidV5(EVESIM_NAMESPACE, `project/${spec.name}`);
    this.overlay.version = nextConfigVersion();
  }

  get name(): string {
    return this.spec.name;
  }
}
