// encodeNewlogLine against lines EVE itself wrote: every line of the EVE-written newlogs vectors,
// decoded and encoded again, must come out byte for byte as EVE's json.Marshal wrote it.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeNewlogLine, type NewlogEntry } from '../src/protocol/newlogs.js';

const DIR = join(import.meta.dirname, 'vectors', 'newlogs');
const files = readdirSync(DIR).filter((f) => f.endsWith('.gz'));

describe('newlogs lines as EVE writes them', () => {
  it('has EVE-written files to compare with', () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
  });

  for (const f of files) {
    it(`re-encodes every line of ${f} byte for byte`, () => {
      const lines = gunzipSync(readFileSync(join(DIR, f))).toString('utf8').split('\n').filter((l) => l !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(encodeNewlogLine(JSON.parse(line) as NewlogEntry)).toBe(line);
    });
  }
});
