// `evesim decode DIR`: print a --record directory as one JSON line per exchange, bodies decoded
// (envelopes opened, protobuf as proto3 JSON, newlogs gunzipped), optionally filtered. DIR is what
// --record was given (one worker-N recording per worker, read in worker order) or one worker's.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readRecording } from '../transport/record-reader.js';
import { decodeExchange } from '../transport/record-decode.js';

export interface DecodeArgs {
  dir: string;
  device?: number;
  endpoint?: string;
  status?: number;
}

/** The worker recordings under a --record directory, or the directory itself when it is one. */
export function recordingDirs(dir: string): string[] {
  if (existsSync(join(dir, 'meta.json'))) return [dir];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new Error(`${dir}: cannot read the directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const workers = names
    .map((n) => /^worker-(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(dir, m[0], 'meta.json')))
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => join(dir, m[0]));
  if (workers.length === 0) throw new Error(`${dir}: not a --record directory (no meta.json, no worker-N recordings)`);
  return workers;
}

export async function runDecode(args: DecodeArgs): Promise<number> {
  let shown = 0;
  let dirs: string[];
  try {
    dirs = recordingDirs(args.dir);
  } catch (e) {
    console.error(`evesim decode: ${(e as Error).message}`);
    return 2;
  }
  try {
    for (const dir of dirs) {
      for await (const x of readRecording(dir, { verify: true })) {
        if (args.device !== undefined && x.deviceIndex !== args.device) continue;
        if (args.endpoint !== undefined && x.endpoint !== args.endpoint) continue;
        if (args.status !== undefined && x.status !== args.status) continue;
        const { request, response } = decodeExchange(x);
        const { requestBody: _q, responseBody: _r, ...meta } = x as unknown as Record<string, unknown>;
        process.stdout.write(JSON.stringify({ ...meta, request, response }) + '\n');
        shown++;
      }
    }
  } catch (e) {
    console.error(`evesim decode: ${(e as Error).message}`);
    return 2;
  }
  console.error(`evesim decode: ${shown} exchange(s) from ${dirs.length === 1 ? dirs[0] : `${args.dir} (${dirs.length} workers)`}`);
  return 0;
}
