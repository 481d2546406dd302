// POST /id/{uuid}/newlogs and the app variant: the payload is an EVE newlogs gzip file. The header
// (device files: Comment = LogBundle metadata JSON) and every line are checked with the strict
// reader from src/protocol/newlogs.ts; any problem → 422 naming it. The device variant answers with
// ServerMetrics JSON (the document's optional body), measured: the controller thread's busy share
// and how long this file took to process.

import { performance } from 'node:perf_hooks';
import { NewlogsError, readNewlogsFile } from '../../protocol/newlogs.js';
import type { ControllerContext, Reply, RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import { unprocessable } from './http-error.js';
import { requireAppOf } from './handle-telemetry.js';

/** Inflated size limit per file: EVE's raw rotation is 550 000 bytes; 16 MiB is far above it. */
const MAX_INFLATED_BYTES = 16 * 1024 * 1024;

export function handleNewlogs(ctx: ControllerContext, req: RequestState): Reply {
  const started = process.hrtime.bigint();
  const { device, payload } = authenticateDevice(ctx, req);
  const app = req.route.endpoint === 'appnewlogs';
  if (app) requireAppOf(device, req.route.appUuid!);
  let lines: number;
  try {
    const file = readNewlogsFile(payload, { kind: app ? 'app' : 'device', parseLines: true, maxBodyBytes: MAX_INFLATED_BYTES });
    const devID = file.meta?.devID;
    if (!app && devID && devID !== device.uuid) throw new NewlogsError(`gzip Comment devID "${devID}" is not the sender's UUID ${device.uuid}`);
    lines = file.rawLines.length;
  } catch (e) {
    if (e instanceof NewlogsError) throw unprocessable(`newlogs: ${e.message}`);
    throw e;
  }
  req.logLines = lines;
  if (app) return { status: 201 };
  const delayMs = Number(process.hrtime.bigint() - started) / 1e6;
  const body = JSON.stringify({ cpu_percentage: cpuSampler.percent(), log_process_delay_msec: Math.round(delayMs) });
  return { status: 201, body: Buffer.from(body), contentType: 'application/json' };
}

/**
 * Busy share of this thread's event loop, in percent, over the interval since the previous sample
 * (at least 1 s apart). Per thread, so it stays the controller's own figure when the controller
 * shares a process with the simulator.
 */
const cpuSampler = (() => {
  let last = performance.eventLoopUtilization();
  let lastAt = Date.now();
  let value = 0;
  return {
    percent(): number {
      const now = Date.now();
      if (now - lastAt >= 1000) {
        const cur = performance.eventLoopUtilization();
        value = Math.round(performance.eventLoopUtilization(cur, last).utilization * 1000) / 10;
        last = cur;
        lastAt = now;
      }
      return value;
    },
  };
})();
