import { describe, expect, test } from '@jest/globals';
import { idColumn } from '@drmas/core';

describe('idColumn', () => {
  test('codes keys in order of first appearance and names each code', () => {
    const column = idColumn(['g2', 'g1', 'g2', 'g3', 'g1']);
    expect(Array.from(column.codes)).toEqual([0, 1, 0, 2, 1]);
    expect(column.names).toEqual(['g2', 'g1', 'g3']);
  });

  test('an empty column has no codes and no names', () => {
    const column = idColumn([]);
    expect(column.codes).toHaveLength(0);
    expect(column.names).toEqual([]);
  });
});
