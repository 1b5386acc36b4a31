/** "Did you mean" for misspelt field names, provider ids and aliases. */

/** The closest candidate within a small edit distance (transpositions count once), if any. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const limit = word.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestD = limit + 1;
  for (const c of candidates) {
    const d = c.toLowerCase() === word.toLowerCase() ? 0 : distance(word, c);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

export function didYouMean(word: string, candidates: Iterable<string>): string {
  const c = closest(word, candidates);
  return c === undefined ? '' : ` (did you mean "${c}"?)`;
}

/** Optimal string alignment distance. */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}
