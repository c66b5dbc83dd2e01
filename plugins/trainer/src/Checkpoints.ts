import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  CHECKPOINT_FORMAT,
  checkpointDirName,
  CHECKPOINT_STATE_FILE,
  CHECKPOINTS_DIR,
  checkWorkerGroups,
  listCheckpoints,
  readTrainerState,
  writeCheckpointManifest,
  type Checkpointable,
  type TrainerState,
} from '@drmas/core';
import type { TrainedWorkerGroup } from './WorkerGroupsService.js';

/** Hidden folders of checkpoint writes and removals in progress: never loaded, removed by the next save. */
const PARTIAL = '.partial-';
const REMOVING = '.removing-';

function fsyncPath(target: string): void {
  const fd = openSync(target, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a checkpoint folder by renaming it out of sight first, so a kill midway never leaves a half-deleted step folder. */
function removeCheckpoint(root: string, dir: string): void {
  const doomed = path.join(root, `${REMOVING}${path.basename(dir)}-${process.pid}`);
  renameSync(dir, doomed);
  rmSync(doomed, { recursive: true, force: true });
}

/**
 * Writes a checkpoint atomically: every worker group's model and optimizer plus the trainer state go into a
 * `.partial-*` folder, then `manifest.json` (each file's size and sha256) last, and the folder is renamed into
 * place. A write that fails removes its `.partial-*` folder; a killed one leaves it, never loaded and removed by the next save.
 * The format written is core's (`core/src/checkpoint/`); the model folders' files are `@drmas/models`'.
 */
export async function saveCheckpoint(
  runDir: string,
  step: number,
  seed: number,
  groups: ReadonlyArray<Pick<TrainedWorkerGroup, 'id'> & { trainer: Pick<TrainedWorkerGroup['trainer'], 'save'> }>,
  states: Checkpointable[],
  keepLast: number,
  /** Writes more into the checkpoint folder before its manifest (the critics). */
  extra?: (dir: string) => Promise<void>,
): Promise<string> {
  const root = path.join(runDir, CHECKPOINTS_DIR);
  mkdirSync(root, { recursive: true });
  for (const name of readdirSync(root)) {
    if (name.startsWith(PARTIAL) || name.startsWith(REMOVING)) rmSync(path.join(root, name), { recursive: true, force: true });
  }
  const partial = path.join(root, `${PARTIAL}${checkpointDirName(step)}-${process.pid}`);
  const final = path.join(root, checkpointDirName(step));
  mkdirSync(partial, { recursive: true });
  try {
    for (const group of groups) await group.trainer.save(path.join(partial, group.id), { optimizer: true });
    await extra?.(partial);
    const state: TrainerState = {
      format: CHECKPOINT_FORMAT,
      step,
      seed,
      workerGroups: groups.map((g) => g.id),
      states: Object.fromEntries(states.map((s) => [s.key, s.getState()])),
    };
    const stateFile = path.join(partial, CHECKPOINT_STATE_FILE);
    writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
    fsyncPath(stateFile);
    await writeCheckpointManifest(partial);
    fsyncPath(partial);
    if (existsSync(final)) removeCheckpoint(root, final);
    renameSync(partial, final);
  } catch (error) {
    // A write that failed (a full disk, say) takes back what it wrote, rather than leave it filling the disk.
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
  fsyncPath(root);
  const all = listCheckpoints(runDir);
  for (const old of all.slice(0, Math.max(0, all.length - keepLast))) removeCheckpoint(root, old.dir);
  return final;
}

/**
 * Restores every worker group's weights and optimizer and every saved state; returns the checkpoint's state. The
 * checkpoint must hold exactly the run's worker groups (`drmas train` has verified its files already).
 */
export async function restoreCheckpoint(dir: string, groups: TrainedWorkerGroup[], states: Checkpointable[]): Promise<TrainerState> {
  const state = readTrainerState(dir);
  checkWorkerGroups(
    dir,
    state.workerGroups,
    groups.map((g) => g.id),
  );
  for (const group of groups) {
    await group.trainer.load(path.join(dir, group.id), { optimizer: true });
    if (group.rollout !== group.trainer) await group.rollout.syncWeights(group.trainer);
  }
  for (const checkpointable of states) {
    if (checkpointable.key in state.states) checkpointable.setState(state.states[checkpointable.key]);
  }
  return state;
}
