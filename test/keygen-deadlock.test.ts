// Node 20 can deadlock exporting a key object that generateKeyPairSync returned (the export holds
// the key's lock while it allocates; a GC then finalises the key-generation job, whose destructor
// waits for the same lock). Identity creation exports four new keys a device, so generateP256 asks
// for DER and imports it: those key objects share nothing with a job. Run in a child process with
// a time limit: the deadlock blocks its thread for good, which a test in this process could not
// survive. Exporting straight from generated key objects hung in 3 of 3 tries of this loop on the
// 2-core machine (as JWK within about 1,500 rounds; reading them as DER hung too).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const keys = fileURLToPath(new URL('../dist/src/identity/keys.js', import.meta.url));

/** Runs `imports` and a 5,000-round `loop` in a child process; it must finish, not hang. */
function expectFinishes(imports: string, loop: string): void {
  expect(existsSync(keys), 'run `npm run build` first (npm test does)').toBe(true);
  const script = [`import { ${imports} } from ${JSON.stringify(keys)};`, `for (let i = 0; i < 5000; i++) ${loop};`, 'console.log("done");'].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 90_000 });
  expect(r.stderr).toBe('');
  expect(r.signal, 'the loop hung (deadlock) and was killed').toBeNull();
  expect(r.stdout.trim()).toBe('done');
}

describe('key generation', () => {
  test('5,000 rounds of generate + private JWK export finish (no deadlock with GC)', () => {
    expectFinishes('generateP256, privateKeyToJwk', 'privateKeyToJwk(generateP256().privateKey)');
  }, 120_000);

  test('5,000 rounds of raw P-256 keys made into key objects and exported finish (the way identities are made now)', () => {
    expectFinishes('generateP256Raw, p256KeyFromRaw', 'p256KeyFromRaw(generateP256Raw()).export({ format: "jwk" })');
  }, 120_000);
});
