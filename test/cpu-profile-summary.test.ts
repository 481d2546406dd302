// The CPU-profile summary's windows: only the samples taken inside a stretch of time count, and a
// stretch of wall-clock time lands on the profile's clock from the instant the process started.
import { describe, expect, it } from 'vitest';
import { selfTimes, summarizeProfile, wallWindow, type Profile } from '../bench/cpu-profile-summary.js';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });
// Samples at 1010, 1110, 1210 and 1310 µs; each stands for the delta that follows it.
const profile: Profile = {
  nodes: [
    { id: 1, callFrame: frame('(idle)') },
    { id: 2, callFrame: frame('verify', 'file:///x/dist/src/a.js') },
    { id: 3, callFrame: frame('write', 'file:///x/dist/src/b.js') },
  ],
  startTime: 1000,
  endTime: 1400,
  samples: [2, 3, 2, 1],
  timeDeltas: [10, 100, 100, 100],
};

describe('cpu-profile-summary windows', () => {
  it('counts every sample without a window', () => {
    expect(Object.fromEntries(selfTimes(profile))).toEqual({ 1: 0, 2: 200, 3: 100 });
  });

  it('counts only the samples inside the window', () => {
    expect(Object.fromEntries(selfTimes(profile, { fromUs: 1100, toUs: 1300 }))).toEqual({ 2: 100, 3: 100 });
    expect(Object.fromEntries(selfTimes(profile, { fromUs: 1200, toUs: 1211 }))).toEqual({ 2: 100 });
  });

  it('places wall-clock times from the process start', () => {
    // Started at wall 50,000 ms; a window from 2 ms to 5 ms after that.
    expect(wallWindow(profile, 50_000, 50_002, 50_005)).toEqual({ fromUs: 3000, toUs: 6000 });
    expect(() => wallWindow({}, 0, 0, 1)).toThrow(/no startTime/);
  });

  it('gives shares of the window and its busy seconds', () => {
    const lines = summarizeProfile(profile, 5, { fromUs: 1100, toUs: 1300 });
    expect(lines[0]).toContain('(0.0 s busy of 0.0 s sampled)');
    expect(lines).toContain('   50.0 %  src/a.js');
    expect(lines).toContain('   50.0 %  src/b.js');
  });
});
