import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import type { WorkerGroup } from '@drmas/core';
import type { WeightsRelease } from '../plugin/episodeJob.js';

/** The folder, under the run directory, the published weights go to (`weights/<worker group>/v<version>/`). */
export const WEIGHTS_FOLDER = 'weights';

/** How many versions stay on disk: the one workers sample with now, and the one before for a worker still loading it. */
const KEEP_VERSIONS = 2;

/**
 * Publishes the trainer's weights to the rollout workers: each worker group's trained model saved as a Hugging Face
 * checkpoint (float32 safetensors, through the engine's own `save`) into the run directory, under a version. Workers
 * load a folder by path, so workers on other machines need the run directory on a shared filesystem.
 */
export class WeightsPublisher {
  /** Distinguishes this trainer process's versions from an earlier run's in the same folder. */
  private readonly nonce = randomUUID().slice(0, 8);

  constructor(private readonly runDir: string) {}

  async publish(version: number, groups: readonly WorkerGroup[]): Promise<WeightsRelease> {
    const paths: Record<string, string> = {};
    for (const group of groups) {
      const root = path.join(this.runDir, WEIGHTS_FOLDER, group.id);
      const dir = path.join(root, `v${version}`);
      // Written aside and renamed, so a worker never loads a half-written folder.
      const partial = `${dir}.partial-${this.nonce}`;
      rmSync(partial, { recursive: true, force: true });
      await group.trainer.save(partial, { optimizer: false, dtype: 'float32' });
      rmSync(dir, { recursive: true, force: true });
      await rename(partial, dir);
      paths[group.id] = dir;
      this.prune(root, version);
    }
    return { version, tag: `${this.nonce}-v${version}`, paths };
  }

  /** Removes all but the newest versions (and partial folders of earlier processes). */
  private prune(root: string, current: number): void {
    for (const entry of readdirSync(root)) {
      const version = /^v(\d+)$/.exec(entry)?.[1];
      const stale = version === undefined ? entry.includes('.partial-') : Number(version) <= current - KEEP_VERSIONS;
      if (stale) rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
}
