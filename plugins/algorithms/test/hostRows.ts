import { hostTensor, type HostTensor } from '@drmas/core';

/** `rows` as a `[rows, columns]` float64 host tensor, for evaluating a loss over core's `hostTensorOps`. */
export const arr = (rows: number[][]): HostTensor => hostTensor(rows.flat(), [rows.length, rows[0]?.length ?? 0]);
