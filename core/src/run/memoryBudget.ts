import os from 'node:os';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { expectedTrainingFactory } from '../engines/EngineService.js';
import type { Contributions } from '../services/Contributions.js';

/** `8GiB`, `512 MiB`, `4GB`, `1.5TiB`, `1000000`: binary units (KiB, MiB, GiB, TiB) count 1024s, decimal ones 1000s. */
export const BYTE_SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/;

const UNITS: Readonly<Record<string, number>> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
};

/** The share of the machine's memory a run may plan to fill when `trainer.memoryBudget` is not set. */
export const DEFAULT_MEMORY_SHARE = 0.75;

/** Bytes of a size setting (a number of bytes, or text matching BYTE_SIZE). */
export function parseByteSize(value: number | string): number {
  if (typeof value === 'number') return value;
  const match = BYTE_SIZE.exec(value.trim());
  if (!match) throw new Error(`not a size: ${JSON.stringify(value)}`);
  return Number(match[1]) * UNITS[match[2] ?? 'B']!;
}

/** `4 GiB`, `37.5 MiB`, `2.31 TiB`: three significant digits in the largest binary unit that fits. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

/** The memory a run may plan for, and how it was chosen (for messages). */
export interface MemoryBudget {
  bytes: number;
  /** `trainer.memoryBudget 8GiB`, or how the default came about. */
  description: string;
}

/**
 * `trainer.memoryBudget` when set; otherwise 75% of the machine's memory, lowered to the smallest limit a model's
 * backend reports for its settings (tfjs on wasm: the 4 GiB its heap cannot grow past).
 */
export function resolveMemoryBudget(config: ResolvedConfig, contributions: Pick<Contributions, 'getNamed' | 'namesOf'>): MemoryBudget {
  const setting = config.trainer.memoryBudget;
  if (setting !== undefined) return { bytes: parseByteSize(setting), description: `trainer.memoryBudget ${String(setting)}` };
  const machine = os.totalmem();
  let bytes = DEFAULT_MEMORY_SHARE * machine;
  let description = `trainer.memoryBudget's default: ${DEFAULT_MEMORY_SHARE * 100}% of this machine's ${formatBytes(machine)}`;
  for (const [id, model] of Object.entries(config.models)) {
    const limit = expectedTrainingFactory(contributions, model)?.memoryLimit?.(model);
    if (limit && limit.bytes < bytes) {
      bytes = limit.bytes;
      description = `trainer.memoryBudget's default for model ${id}: ${limit.reason}`;
    }
  }
  return { bytes, description };
}
