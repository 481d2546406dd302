// Prometheus metrics for local profile servers, registered next to the request metrics
// (metrics-server.ts): answers refused for a wrong token, the LPS agents' events, devices by radio
// and GNSS state, and the sites' commands (issued, acknowledged, completion quantiles), read from
// their admin APIs at scrape time. LPS request latency itself is in evesim_request_duration_seconds
// under endpoint="lps.radio" and the like.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { LpsSites } from './lps-sites.js';
import { commandLatency, type LpsAggregate } from './lps-summary.js';

export function registerLpsMetrics(registry: Registry, lps: LpsAggregate, sites?: LpsSites): void {
  const tokenSeen = new Map<string, number>();
  new Counter({
    name: 'evesim_lps_token_rejections_total',
    help: 'LPS answers with a body that devices ignored because server_token did not match profile_server_token, by LPS endpoint',
    labelNames: ['endpoint'],
    registers: [registry],
    collect() {
      for (const [endpoint, n] of Object.entries(lps.totals().tokenRejected)) {
        const inc = n - (tokenSeen.get(endpoint) ?? 0);
        if (inc > 0) this.inc({ endpoint }, inc);
        tokenSeen.set(endpoint, n);
      }
    },
  });
  const eventSeen = new Map<string, number>();
  new Counter({
    name: 'evesim_lps_agent_events_total',
    help: "What the devices' LPS agents did: app and device commands accepted and completed, radio changes applied and failed, posts held back",
    labelNames: ['event'],
    registers: [registry],
    collect() {
      for (const [event, n] of Object.entries(lps.totals().agent)) {
        const inc = n - (eventSeen.get(event) ?? 0);
        if (inc > 0) this.inc({ event }, inc);
        eventSeen.set(event, n);
      }
    },
  });
  new Gauge({
    name: 'evesim_lps_devices',
    help: 'Devices by radio state (first modem, or a radio-silence change in progress) and by GNSS fix quality',
    labelNames: ['kind', 'state'],
    registers: [registry],
    collect() {
      const t = lps.totals();
      this.reset();
      for (const [state, n] of Object.entries(t.radio)) this.set({ kind: 'radio', state }, n);
      for (const [state, n] of Object.entries(t.gnss)) this.set({ kind: 'gnss', state }, n);
    },
  });
  if (sites === undefined) return;
  const commands = new Gauge({
    name: 'evesim_lps_commands',
    help: 'Commands the sites were asked for, and how many devices acknowledged (last_cmd_timestamp), by command',
    labelNames: ['command', 'state'],
    registers: [registry],
  });
  new Gauge({
    name: 'evesim_lps_command_completion_seconds',
    help: 'Issue-to-acknowledgement time of the acknowledged LPS commands so far (quantiles over the run)',
    labelNames: ['quantile'],
    registers: [registry],
    async collect() {
      let all;
      try {
        all = await sites.commands();
      } catch {
        return; // an LPS that does not answer now: keep the last values
      }
      const c = commandLatency(all);
      commands.reset();
      for (const [command, l] of Object.entries(c.byCommand)) {
        commands.set({ command, state: 'issued' }, l.issued);
        commands.set({ command, state: 'acked' }, l.acked);
      }
      for (const [q, v] of [['0.5', c.p50_ms], ['0.9', c.p90_ms], ['0.99', c.p99_ms], ['1', c.max_ms]] as const) {
        if (v !== null) this.set({ quantile: q }, v / 1000);
      }
    },
  });
}
