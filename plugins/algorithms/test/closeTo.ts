/** Shared float comparison for the tests: |actual - expected| <= tol * max(1, |expected|). */
export function expectClose(actual: number, expected: number, tol = 1e-9, label = ''): void {
  const ok = Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected));
  if (!ok) throw new Error(`${label}: expected ${expected}, got ${actual} (diff ${actual - expected})`);
}

export function expectMatrixClose(actual: ArrayLike<ArrayLike<number>>, expected: ArrayLike<ArrayLike<number>>, tol = 1e-9, label = ''): void {
  if (actual.length !== expected.length) throw new Error(`${label}: ${actual.length} rows, expected ${expected.length}`);
  for (let r = 0; r < expected.length; r++) {
    if (actual[r].length !== expected[r].length) throw new Error(`${label}: row ${r} has ${actual[r].length} entries, expected ${expected[r].length}`);
    for (let t = 0; t < expected[r].length; t++) expectClose(actual[r][t], expected[r][t], tol, `${label} [${r}][${t}]`);
  }
}
