// Local profile servers in the scenario layer: sites, a group's GNSS and cellular models, the
// timeline actions that go through an LPS (and power-on), and the LPS threshold subjects.

import type { ScenarioCapability } from '../scenario-capability.js';
import { buildLpsAction, buildSites, lpsGroupFields, type LpsGroupDocument, type SiteDocument } from './build-lps.js';
import { checkLps } from './check-lps.js';
import { LPS_GROUP_PROPERTIES, LPS_TIMELINE_ACTIONS, LPS_TIMELINE_ACTION_SCHEMAS, SITES_SCHEMA } from './lps-scenario-schema.js';
import { isLpsAction } from './lps-scenario-types.js';
import { LPS_THRESHOLD_SUBJECTS } from './lps-thresholds.js';

export const LPS_SCENARIO: ScenarioCapability = {
  name: 'lps',
  schema: {
    groupProperties: LPS_GROUP_PROPERTIES,
    scenarioProperties: { sites: SITES_SCHEMA },
    timelineActionNames: LPS_TIMELINE_ACTIONS,
    timelineActionSchemas: LPS_TIMELINE_ACTION_SCHEMAS,
  },
  check: checkLps,
  buildGroup: (g) => lpsGroupFields(g as LpsGroupDocument),
  buildScenario(doc, scenario) {
    const sites = buildSites(doc.sites as SiteDocument[] | undefined);
    if (sites) scenario.sites = sites;
  },
  buildTimelineAction: (atMs, t) => (isLpsAction(t) ? buildLpsAction(atMs, t) : undefined),
  thresholdSubjects: LPS_THRESHOLD_SUBJECTS,
};
