/** Shared float comparison for the tests: |actual - expected| <= tol * max(1, |expected|). */
export function expectClose(actual: number, expected: number, tol = 1e-9, label = ''): void {
  const ok = Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected));
  if (!ok) throw new Error(`${label}: expected ${expected}, got ${actual} (diff ${actual - expected})`);
}

export function expectMatrixClose(
  actual: ArrayLike<ArrayLike<number>>,
  expected: ArrayLike<ArrayLike<number>>,
  tol = 1e-9,
  label = '',
): void {
  if (actual.length !== expected.length) throw new Error(`${label}: ${actual.length} rows, expected ${expected.length}`);
  for (let r = 0; r < expected.length; r++) {
    const a = actual[r]!;
    const e = expected[r]!;
    if (a.length !== e.length) throw new Error(`${label}: row ${r} has ${a.length} entries, expected ${e.length}`);
    for (let t = 0; t < e.length; t++) expectClose(a[t]!, e[t]!, tol, `${label} [${r}][${t}]`);
  }
}
