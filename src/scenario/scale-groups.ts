// `--devices N`: share N devices among the groups in proportion to their counts in the file, every
// group keeping at least one device, the total exactly N. Largest-remainder rounding, ties to the
// earlier group, so the split is the same on every run.

export function scaleGroupCounts(counts: readonly number[], total: number): number[] {
  if (!Number.isInteger(total) || total < counts.length) {
    throw new Error(`cannot share ${total} devices among ${counts.length} groups with at least one device each`);
  }
  const sum = counts.reduce((a, b) => a + b, 0);
  const ideal = counts.map((c) => (total * c) / sum);
  const out = ideal.map((x) => Math.max(1, Math.floor(x)));
  let diff = total - out.reduce((a, b) => a + b, 0);
  while (diff > 0) {
    // Give one more to the group furthest below its share.
    let best = 0;
    for (let i = 1; i < out.length; i++) if (ideal[i] - out[i] > ideal[best] - out[best]) best = i;
    out[best]++;
    diff--;
  }
  while (diff < 0) {
    // Only when the minimum of one pushed the total over: take from the group furthest above its share.
    let best = -1;
    for (let i = 0; i < out.length; i++) {
      if (out[i] > 1 && (best < 0 || out[i] - ideal[i] > out[best] - ideal[best])) best = i;
    }
    out[best]--;
    diff++;
  }
  return out;
}
