// What a request costs the generator when requests leave one at a time versus in batches, at the
// same rate: why `--tick` cuts the generator's CPU. Bare undici GETs of /ping over kept-alive TLS
// (the shared pool's settings: 64 connections, one request per connection) to `evesim controller --sink` in a
// child process (its CPU is not counted), at R requests per second, sent either one every 1/R s or
// B at a time every B/R s. Client CPU per request is process.cpuUsage() (every thread) over the
// round ÷ requests. Rounds alternate the order of the batch sizes; medians are printed.
//
//   npx tsc -p tsconfig.json && node dist/bench/request-batching.js [--rate 330] [--batches 1,4,16] [--seconds 4] [--rounds 3]
//
// 330 requests/s is one worker's share of a 7,500-device fleet at EVE's timers (5.3 requests per
// device-minute, two workers). The baseline is batch size 1, measured in the same run.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { DEFAULT_POOL_CONNECTIONS } from '../src/transport/controller-transport.js';
import { checkBenchArgs, positiveIntArg, stringArg } from './bench-args.js';
import { machineDescription } from './machine.js';
import { startStormController } from './storm-controller.js';

const USAGE = `request-batching: client CPU per request sent one at a time against in batches at the same rate (why --tick helps).
  node dist/bench/request-batching.js [--rate 330] [--batches 1,4,16] [--seconds 4] [--rounds 3]`;
checkBenchArgs(USAGE, ['rate=', 'batches=', 'seconds=', 'rounds=']);

const rate = positiveIntArg('rate', 330);
const batches = stringArg('batches', '1,4,16').split(',').map((s) => {
  const n = Number(s);
  if (!(Number.isInteger(n) && n >= 1)) throw new Error(`--batches: "${s}" is not a whole number >= 1`);
  return n;
});
const seconds = positiveIntArg('seconds', 4);
const rounds = positiveIntArg('rounds', 3);

const dir = mkdtempSync(join(os.tmpdir(), 'evesim-batching-'));
const ctl = await startStormController(join(dir, 'controller'), { sink: true });
try {
  console.log(`machine: ${machineDescription()}`);
  const pool = new Pool(new URL(ctl.url).origin, { connections: DEFAULT_POOL_CONNECTIONS, pipelining: 1, connect: { ca: readFileSync(ctl.rootCaFile, 'utf8') } });
  const one = async (): Promise<void> => {
    const res = await pool.request({ path: '/api/v2/edgedevice/ping', method: 'GET' });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`GET /ping answered ${res.statusCode}`);
  };
  /** Client CPU per request (µs) sending `total` requests `batch` at a time at `rate` per second. */
  const round = async (batch: number, total: number): Promise<number> => {
    const gapMs = (1000 * batch) / rate;
    const before = process.cpuUsage();
    const start = performance.now();
    const sent: Promise<void>[] = [];
    for (let i = 0; i * batch < total; i++) {
      for (let j = 0; j < batch; j++) sent.push(one());
      // Keep to the schedule (a late batch does not push the next one back).
      const wait = start + (i + 1) * gapMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
    await Promise.all(sent);
    const used = process.cpuUsage(before);
    return (used.user + used.system) / sent.length;
  };
  await round(8, 2000); // warm-up: connections opened, code compiled
  const total = rate * seconds;
  const figures = new Map<number, number[]>(batches.map((b) => [b, []]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? batches : [...batches].reverse();
    for (const b of order) figures.get(b)!.push(await round(b, total));
  }
  await pool.close();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(figures.get(batches[0]!)!);
  console.log(`${rate} requests/s, ${total} per round, ${rounds} rounds (medians; all rounds in brackets):`);
  for (const b of batches) {
    const m = median(figures.get(b)!);
    const all = figures.get(b)!.map((x) => x.toFixed(0)).join(', ');
    console.log(`  ${String(b).padStart(3)} at a time, every ${((1000 * b) / rate).toFixed(1)} ms: ${m.toFixed(1)} µs CPU per request (${all}); × ${(m / base).toFixed(2)} of batch size ${batches[0]}`);
  }
} finally {
  await ctl.stop();
  rmSync(dir, { recursive: true, force: true });
}
