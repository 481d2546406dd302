// The local profile server part of the run summary (RunSummary.lps): the sites, how long commands
// took from the moment the LPS was asked for them until the device acknowledged them
// (last_cmd_timestamp equal to the command's timestamp, as the LPS saw it), answers devices refused
// for a wrong server_token, the LPS agents' counters and devices by radio and GNSS state at the end
// of the run. Worker figures come from the fleet deltas (LpsAggregate), command times from the
// sites' admin APIs.

import type { LpsWorkerFigures } from '../../fleet/lps-fleet.js';
import type { FleetAggregate } from '../aggregate.js';
import type { SiteCommand } from './lps-sites.js';

type CommandTimes = Pick<SiteCommand, 'command' | 'issuedAt' | 'completedAt'>;

export interface LpsCommandLatency {
  /** Commands the sites were asked for. */
  issued: number;
  /** Commands a device acknowledged before the run ended. */
  acked: number;
  /** acked / issued; null when none were issued. */
  ackedRatio: number | null;
  /** Issue → acknowledgement, ms, over the acknowledged commands (nearest rank); null when none. */
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
}

export interface LpsRunSummary {
  sites: { name: string; address: string; groups: string[] }[];
  /** All commands, and per command name ('restart', 'reboot', ...). */
  commands: LpsCommandLatency & { byCommand: Record<string, LpsCommandLatency> };
  /** Answers with a body the devices ignored because server_token was not theirs. */
  tokenRejected: { total: number; byEndpoint: Record<string, number> };
  agent: LpsWorkerFigures['agent'];
  /** Devices by the state of their first modem ('radio-off' under radio silence, 'applying' while it changes). */
  devicesByRadioState: Record<string, number>;
  /** Devices with a GNSS receiver by fix quality. */
  devicesByGnssState: Record<string, number>;
}

/** The latest LPS figures of each worker, summed. Subscribes to the fleet aggregate's deltas. */
export class LpsAggregate {
  private readonly workers = new Map<number, LpsWorkerFigures>();

  constructor(agg: FleetAggregate) {
    agg.onDelta((d) => {
      if (d.lps !== undefined) this.workers.set(d.workerId, d.lps);
    });
  }

  get seen(): boolean {
    return this.workers.size > 0;
  }

  totals(): LpsWorkerFigures {
    const out: LpsWorkerFigures = {
      agent: {
        appCommandsAccepted: 0,
        appCommandsSkipped: 0,
        appCommandsCompleted: 0,
        deviceCommandsAccepted: 0,
        deviceCommandsRefused: 0,
        radioChangesApplied: 0,
        radioChangesFailed: 0,
        radioPostsSuppressed: 0,
        locationPostsThrottled: 0,
      },
      tokenRejected: {},
      radio: {},
      gnss: {},
    };
    for (const w of this.workers.values()) {
      for (const k of Object.keys(out.agent) as (keyof LpsWorkerFigures['agent'])[]) out.agent[k] += w.agent[k] ?? 0;
      add(out.tokenRejected, w.tokenRejected);
      add(out.radio, w.radio);
      add(out.gnss, w.gnss);
    }
    return out;
  }
}

/** Over command records; only their name and times are read (`evesim merge` passes just those). */
export function commandLatency(commands: readonly CommandTimes[]): LpsRunSummary['commands'] {
  const byName = new Map<string, CommandTimes[]>();
  for (const c of commands) {
    let l = byName.get(c.command);
    if (l === undefined) byName.set(c.command, (l = []));
    l.push(c);
  }
  const byCommand: Record<string, LpsCommandLatency> = {};
  for (const [name, list] of [...byName].sort((a, b) => a[0].localeCompare(b[0]))) byCommand[name] = latencyOf(list);
  return { ...latencyOf(commands), byCommand };
}

export function buildLpsSummary(
  sites: LpsRunSummary['sites'],
  commands: readonly SiteCommand[],
  figures: LpsWorkerFigures,
): LpsRunSummary {
  const total = Object.values(figures.tokenRejected).reduce((a, b) => a + b, 0);
  return {
    sites,
    commands: commandLatency(commands),
    tokenRejected: { total, byEndpoint: { ...figures.tokenRejected } },
    agent: { ...figures.agent },
    devicesByRadioState: { ...figures.radio },
    devicesByGnssState: { ...figures.gnss },
  };
}

function latencyOf(commands: readonly CommandTimes[]): LpsCommandLatency {
  const ms = commands.filter((c) => c.completedAt !== null).map((c) => Math.max(0, c.completedAt! - c.issuedAt));
  ms.sort((a, b) => a - b);
  const rank = (p: number): number | null => (ms.length === 0 ? null : ms[Math.min(ms.length - 1, Math.max(0, Math.ceil((p / 100) * ms.length) - 1))]!);
  return {
    issued: commands.length,
    acked: ms.length,
    ackedRatio: commands.length === 0 ? null : ms.length / commands.length,
    p50_ms: rank(50),
    p90_ms: rank(90),
    p99_ms: rank(99),
    max_ms: rank(100),
  };
}

function add(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}
