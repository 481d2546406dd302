// "did you mean …?" for misspelt names: the closest candidate within a small edit distance.

export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDist) {
      best = c;
      bestDist = d;
    }
  }
  // Allow about one typo per four letters; beyond that a suggestion is noise.
  return bestDist <= Math.max(1, Math.floor(word.length / 4)) && bestDist < word.length ? best : undefined;
}

export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c ? ` (did you mean "${c}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
