import { hashParts } from '../random/hash.js';
import { shuffledIndices } from '../random/SplitMix32.js';

/**
 * Maps a global cursor to an index of a finite pool: cursor `c` is position `c % size` of epoch `floor(c / size)`,
 * and each epoch is its own permutation drawn from (seed, label, epoch). A run resumed from a saved cursor therefore
 * sees exactly the tasks it would have seen without the interruption.
 */
export class EpochSchedule {
  private cachedEpoch = -1;
  private cachedOrder: Uint32Array = new Uint32Array(0);

  constructor(
    readonly size: number,
    private readonly seed: number,
    private readonly label: string,
  ) {}

  indexAt(cursor: number): number {
    const epoch = Math.floor(cursor / this.size);
    if (epoch !== this.cachedEpoch) {
      this.cachedOrder = shuffledIndices(this.size, hashParts(this.label, this.seed, 'epoch', epoch));
      this.cachedEpoch = epoch;
    }
    // In 0..size-1 for the non-negative integer cursors that batch() checks.
    return this.cachedOrder[cursor - epoch * this.size]!;
  }
}
