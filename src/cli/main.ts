// The evesim command line: thin yargs wiring over the runner, the scenario loader and the
// embedded controller. Exit codes: 0 ok / thresholds passed, 1 a threshold failed, 2 bad input.

import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runValidate } from './validate-command.js';
import { runRun } from './run-command.js';
import { RUN_EXAMPLES, groupRunOptions } from './run-option-groups.js';
import { runControllerCommand } from './controller-command.js';
import { runDecode } from './decode-command.js';
import { runLpsCommand } from './lps-command.js';
import { runMerge } from './merge-command.js';
import { runReport } from './report-command.js';

await yargs(hideBin(process.argv))
  .scriptName('evesim')
  .usage('$0 <command> [options]')
  .command(
    'run <scenario>',
    'run a scenario against the embedded controller or a real one',
    (y) =>
      groupRunOptions(y)
        .positional('scenario', { type: 'string', demandOption: true, describe: 'scenario YAML file' })
        .option('target', { type: 'string', describe: 'embedded: run against the embedded controller whatever target the scenario names (a real controller: --controller)' })
        .option('controller', { type: 'string', describe: 'URL of a real controller (overrides the scenario target)' })
        .option('controller-v1', { type: 'string', describe: "with --controller: the controller's API v1 (mutual TLS) base URL when it serves v1 elsewhere (evesim controller: its --v1-port); default the --controller URL" })
        .option('root-ca', { type: 'string', describe: 'PEM file of the controller root CA (optional with --insecure-skip-verify)' })
        .option('onboard-cert', { type: 'string', describe: 'onboarding certificate PEM' })
        .option('onboard-key', { type: 'string', describe: 'onboarding private key PEM' })
        .option('insecure-skip-verify', { type: 'boolean', default: false, describe: 'turn TLS verification off (prints a warning)' })
        .option('devices', { type: 'number', describe: 'scale the fleet to N devices' })
        .option('duration', { type: 'string', describe: 'override the run duration, e.g. 90s, 10m' })
        .option('arrival-over', { type: 'string', describe: 'devices come online spread evenly over this window, e.g. 8m (overrides the scenario arrival)' })
        .option('graceful-stop', {
          type: 'string',
          describe: 'after the duration, how long devices may deliver what they still have queued (default: the scenario\'s gracefulStop, 15s); 0s: none',
        })
        .option('seed', { type: 'number', describe: 'override the scenario seed' })
        .option('workers', { type: 'number', describe: 'worker threads (default: one per core)' })
        .option('max-in-flight', {
          type: 'number',
          describe: 'most controller requests one worker has on the wire or in its pool at once (default 256: 4 per pooled connection); more wait in order, their wait counted in their latency',
        })
        .option('tick', {
          type: 'string',
          describe: 'devices wake on a grid of this step, e.g. 50ms (default 0: exact times); a timer due between two ticks fires at the next and its request counts as due then, so latency stays honest; the workers serve each tick in one batch, which cuts the generator\'s CPU for large fleets (README "Capacity")',
        })
        .option('log-memory', {
          type: 'string',
          describe: 'compressed log bytes each device holds in memory while its files wait for upload, e.g. 8KiB (default 32KiB); the rest waits in its worker\'s spill file under --state-dir, as EVE keeps them on disk; 0 keeps none in memory (README "Capacity")',
        })
        .option('metrics-port', { type: 'number', describe: 'serve Prometheus metrics on HOST:PORT/metrics (HOST from --metrics-host)' })
        .option('metrics-host', { type: 'string', describe: 'address the metrics server listens on (default $EVESIM_METRICS_HOST, else 127.0.0.1; 0.0.0.0 so a Prometheus on another host or pod can scrape it; the container image sets 0.0.0.0)' })
        .option('metrics-linger', {
          type: 'string',
          describe: 'how long /metrics stays up after the summary so Prometheus scrapes the final figures (default 35s: two scrapes at 15 s); 0 to exit at once; Ctrl-C or SIGTERM ends it early',
        })
        .option('summary-json', { type: 'string', describe: 'write the run summary as JSON to FILE' })
        .option('report', { type: 'string', describe: 'write a self-contained HTML report to FILE.html when the run ends (charts over time, thresholds, endpoints; opens offline)' })
        .option('out', {
          // Not `array: true`: that would swallow a scenario file written after it. Repeated, yargs gives an array.
          type: 'string',
          describe: 'FORMAT=TARGET, repeatable: stream the time series while the run goes; jsonl=FILE writes one JSON object per 1 s interval (tail -f friendly)',
        })
        .option('junit', { type: 'string', describe: 'write the thresholds as JUnit XML to FILE (one test case per threshold; a failure carries the measured value)' })
        .option('record', { type: 'string', describe: 'record every request and response into DIR' })
        .option('state-dir', { type: 'string', describe: 'fleet state directory (identities, controller PKI)' })
        .option('controller-admin', {
          type: 'string',
          describe: 'admin API URL of the --controller when it is an `evesim controller` shared by all shards: each shard adds its devices to its fleet, shard 0 applies the controller-side timeline actions',
        })
        .option('shard', {
          type: 'string',
          describe:
            'i/n: run only shard i of n (device indices ≡ i mod n) of the fleet a single run builds; every shard needs the same scenario, flags, seed and --fleet-id. ' +
            'Each process applies controller-side timeline actions to its own embedded controller (its devices only); with a shared --controller --controller-admin only shard 0 does, with --controller alone none',
        })
        .option('start-at', { type: 'string', describe: 'common start time of all shards: ISO-8601 (2026-11-24T22:00:00Z) or +DURATION from process start (+30s); more than 1 s past: exit 2' })
        .option('fleet-id', { type: 'string', describe: 'enters the serials so fleets with one seed never collide; give all shards of a fleet the same (default: made once per state directory)' })
        .option('fault', {
          type: 'string',
          describe:
            "inject a fault (repeatable), e.g. 'partition group=edge share=30% at=1m for=60s': partition, blackhole, latency (delay=, jitter=), loss (loss=20%), reset, dns-failure, tls-failure, clock-skew (offset=+2h), power-loss, tpm-reset; on group=, share= or devices=0,5; for= or until=",
        })
        .option('dry-run', { type: 'boolean', default: false, describe: "check the scenario and flags, print this shard's fleet plan, start nothing" })
        .option('quiet', { type: 'boolean', default: false, describe: 'no live progress line' })
        .example(RUN_EXAMPLES),
    async (argv) => {
      process.exitCode = await runRun(argv);
    },
  )
  .command(
    'validate <file>',
    'check a scenario file and print what it describes',
    (y) => y.positional('file', { type: 'string', demandOption: true }),
    (argv) => {
      process.exitCode = runValidate(argv.file);
    },
  )
  .command(
    'controller',
    'run the embedded controller alone in the foreground',
    (y) =>
      y
        .option('port', { type: 'number', default: 8443, describe: 'device API port (controller API v2, TLS; /api/v2/edgedevice/...); 0 picks a free one' })
        .option('admin-port', { type: 'number', default: 8444, describe: 'admin API port (plain HTTP on 127.0.0.1: /admin/stats, /admin/devices, PUT /admin/fleet; what --controller-admin of evesim run names)' })
        .option('v1-port', { type: 'number', default: 8445, describe: 'controller API v1 port (mutual TLS, /api/v1/edgedevice/..., for groups with api: v1); 0 picks a free one' })
        .option('state-dir', { type: 'string', default: '.evesim-state/controller', describe: 'directory of the controller PKI (root CA devices must trust) and the onboarding credentials it makes' })
        .option('onboard-ca', { type: 'string', describe: 'PEM of the CA that signs onboarding certificates (repeatable; default: a CA of its own in --state-dir, whose certificate and key it prints)', array: true })
        .option('require-pre-registration', { type: 'boolean', default: false, describe: 'refuse (403) a register whose serial the fleet (PUT /admin/fleet) does not list' })
        .option('sink', {
          type: 'boolean',
          default: false,
          describe:
            'LOAD-TEST SINK, not a conformance controller: config, attest, info, metrics and logs are answered from precomputed signed responses (quotes, nonces and integrity tokens unchecked, bodies not decoded) and only --verify-sample of the request signatures is verified; for capacity runs of 10^5 devices',
        })
        .option('verify-sample', { type: 'string', default: '1%', describe: 'with --sink: share of requests whose signature is verified (e.g. 1%, 0.5%, 100%)' })
        .example('$0 controller --state-dir ctl', 'listen on 8443 (v2), 8445 (v1) and 127.0.0.1:8444 (admin); print the root CA and onboarding files for evesim run --controller'),
    async (argv) => {
      process.exitCode = await runControllerCommand(argv);
    },
  )
  .command(
    'lps',
    'run one embedded local profile server alone in the foreground',
    (y) =>
      y
        .option('host', { type: 'string', default: '127.0.0.1', describe: 'address of the device API (the LPS is plain HTTP: keep it local)' })
        .option('port', { type: 'number', default: 8888, describe: "device API port (EVE's default LPS port)" })
        .option('admin-port', { type: 'number', default: 8889, describe: 'JSON admin API port on 127.0.0.1' })
        .option('site', { type: 'string', default: 'site', describe: 'site name, for messages' })
        .option('token', { type: 'string', describe: 'server_token (default: the state file\'s, else random)' })
        .option('state-file', { type: 'string', describe: 'JSON file (mode 0600) keeping command requests across restarts' })
        .option('profile', { type: 'string', describe: 'local profile served from the start' })
        .option('radio-silence', { type: 'boolean', describe: 'radio silence asked for from the start' })
        .option('throttle', { type: 'string', array: true, describe: 'endpoints answered with 404 (local_profile, radio, appinfo, devinfo, location, ...)' }),
    async (argv) => {
      process.exitCode = await runLpsCommand(argv);
    },
  )
  .command(
    'decode <dir>',
    'print a --record directory as JSON lines with every body decoded',
    (y) =>
      y
        .positional('dir', { type: 'string', demandOption: true })
        .option('device', { type: 'number', describe: 'only this device index' })
        .option('endpoint', { type: 'string', describe: 'only this endpoint (config, info, ...)' })
        .option('status', { type: 'number', describe: 'only exchanges with this HTTP status (0: no answer)' }),
    async (argv) => {
      process.exitCode = await runDecode(argv);
    },
  )
  .command(
    'merge <summaries..>',
    'merge the summary JSON files of the shards of one fleet and judge the thresholds on the whole fleet',
    (y) =>
      y
        .positional('summaries', { type: 'string', array: true, demandOption: true, describe: 'summary JSON files (--summary-json of each shard)' })
        .option('summary-json', { type: 'string', describe: 'write the merged summary as JSON to FILE' })
        .option('junit', { type: 'string', describe: 'write the thresholds as JUnit XML to FILE' }),
    (argv) => {
      process.exitCode = runMerge({ summaries: argv.summaries, summaryJson: argv.summaryJson, junit: argv.junit }).exitCode;
    },
  )
  .command(
    'report <summary>',
    'print the report of a saved summary JSON (a run\'s --summary-json or a merged one); --html writes it as a self-contained HTML report',
    (y) =>
      y
        .positional('summary', { type: 'string', demandOption: true, describe: 'summary JSON file (--summary-json of a run, or of evesim merge)' })
        .option('html', { type: 'string', describe: 'write the HTML report to FILE.html instead of printing the text report' })
        .example('$0 report summary.json --html report.html', 'render a run\'s (or a merged fleet\'s) summary as HTML'),
    (argv) => {
      process.exitCode = runReport({ summary: argv.summary, html: argv.html });
    },
  )
  .demandCommand(1, 'name a command: run, validate, controller, lps, decode, merge or report')
  .strict()
  .fail((msg, err, y) => {
    if (err) throw err;
    console.error(`evesim: ${msg}\n`);
    y.showHelp();
    process.exit(2);
  })
  .help()
  .parseAsync();
