// Local profile servers in the runner: one embedded LPS per site (only the embedded controller
// points devices at them), their metrics, their timeline actions, the summary's `lps` section, the
// LPS threshold subjects and the report lines.

import { LPS_ENDPOINT_KEYS } from '../../device/lps/lps-endpoints.js';
import { LPS_ACTION_NAMES } from '../../scenario/lps/lps-scenario-types.js';
import type { RunCapability } from '../run-capability.js';
import { registerLpsMetrics } from './lps-metrics.js';
import { lpsReportLines } from './lps-report.js';
import { defaultStartLps, LpsSites, type SiteCommand } from './lps-sites.js';
import { buildLpsSummary, LpsAggregate } from './lps-summary.js';
import { measureLps } from './lps-thresholds.js';
import { lpsCommandTimes } from '../mergeable-summary.js';

export const LPS_RUN: RunCapability = {
  name: 'lps',
  endpointKeys: LPS_ENDPOINT_KEYS,
  timelineActions: LPS_ACTION_NAMES,
  measureThreshold: measureLps,
  reportAfterFacts: (s) => lpsReportLines(s.lps),
  async start(ctx, admin) {
    const { opts, err, scenario } = ctx;
    let sites: LpsSites | undefined;
    if (scenario.sites !== undefined && admin) {
      const started = await LpsSites.start(scenario.sites, ctx.stateDir, opts.startLps ?? defaultStartLps);
      ctx.cleanups.add(() => started.stop());
      if (!opts.quiet) err(`evesim: local profile servers: ${started.describe().map((x) => `${x.name} on ${x.address}`).join(', ')}\n`);
      sites = started;
    } else if (scenario.sites !== undefined) {
      err('evesim: warning: sites need the embedded controller to point devices at their LPS; no LPS is started with a real controller\n');
    }
    // Devices report LPS figures in their deltas even without sites (a real controller's LPS).
    const figures = new LpsAggregate(ctx.aggregate);
    return {
      fleet: (fleet) => (sites ? { ...fleet, groups: sites.groups(fleet.groups) } : fleet),
      registerMetrics: (registry) => registerLpsMetrics(registry, figures, sites),
      scheduleTimeline: (startAtMs) => (sites ? sites.scheduleTimeline(scenario, startAtMs, admin, err) : []),
      async summarise(measured) {
        if (!sites && !Object.keys(measured.endpoints).some((k) => k.startsWith('lps.'))) return;
        let commands: SiteCommand[] = [];
        try {
          commands = (await sites?.commands()) ?? [];
        } catch (e) {
          err(`evesim: warning: could not read the LPS command records: ${e instanceof Error ? e.message : String(e)}\n`);
        }
        measured.lps = buildLpsSummary(sites?.describe() ?? [], commands, figures.totals());
        // `evesim merge` recomputes the command percentiles over every shard's commands.
        if (measured.mergeable) measured.mergeable.lpsCommands = lpsCommandTimes(commands);
      },
    };
  },
};
