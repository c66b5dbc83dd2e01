import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHECKPOINTS_DIR, listCheckpoints } from '@drmas/core';
import { saveCheckpoint } from '../src/Checkpoints.js';

/** A worker group whose engine writes 4 KiB into its folder and then, when `full`, fails as a full disk does. */
function group(id: string, full: boolean) {
  return {
    id,
    trainer: {
      async save(dir: string) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'model.safetensors'), Buffer.alloc(4096));
        if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
      },
    },
  };
}

describe('a checkpoint write', () => {
  it('that fails takes back its partial folder and leaves the checkpoints before it', async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), 'drmas-ckpt-'));
    try {
      await saveCheckpoint(runDir, 1, 0, [group('policy', false)], [], 3);
      await expect(saveCheckpoint(runDir, 2, 0, [group('policy', false), group('critic', true)], [], 3)).rejects.toMatchObject({
        code: 'ENOSPC',
      });
      // Only step 1's checkpoint: no `.partial-*` folder holding the 4 KiB the failed write got down.
      expect(readdirSync(path.join(runDir, CHECKPOINTS_DIR))).toEqual(['step-000001']);
      expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([1]);
    } finally {
      rmSync(runDir, { recursive: true, force: true });
    }
  });
});
