// The cheapest a generator could send one onboarding request: one ECDSA P-256 sign of a 1 KiB body
// (what a device signs per request) and one bare undici GET over a kept-alive TLS connection whose
// answer is read, measured against the same controller in the same run. A calibration: on a busy
// shared machine every CPU figure moves, this one with them.

import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

/** Client CPU per request, µs (all threads of this process), median of `rounds` rounds. */
export async function signedRequestFloorUs(url: string, rootCaFile: string, opts: { requests?: number; concurrency?: number; rounds?: number } = {}): Promise<number> {
  const requests = opts.requests ?? 2000;
  const concurrency = opts.concurrency ?? 32;
  const rounds = opts.rounds ?? 3;
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const body = randomBytes(1024);
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, connect: { ca: readFileSync(rootCaFile, 'utf8') } });
  const one = async (): Promise<void> => {
    sign('sha256', body, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const res = await pool.request({ path: '/api/v2/edgedevice/ping', method: 'GET' });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`floor: GET /ping answered ${res.statusCode}`);
  };
  const round = async (n: number): Promise<number> => {
    const before = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await one();
      }),
    );
    const used = process.cpuUsage(before);
    return (used.user + used.system) / n;
  };
  try {
    await round(Math.max(500, concurrency * 10)); // warm-up: JIT, every connection opened
    const xs: number[] = [];
    for (let r = 0; r < rounds; r++) xs.push(await round(requests));
    return xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  } finally {
    await pool.close();
  }
}
