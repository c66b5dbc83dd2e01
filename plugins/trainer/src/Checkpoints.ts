import { existsSync, mkdirSync, openSync, fsyncSync, closeSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  checkpointDirName,
  CHECKPOINT_STATE_FILE,
  CHECKPOINTS_DIR,
  listCheckpoints,
  readTrainerState,
  type Checkpointable,
  type TrainerState,
} from '@drmas/core';
import type { TrainedWorkerGroup } from './WorkerGroupsService.js';

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a checkpoint atomically: every worker group's model and optimizer plus the trainer state go into a
 * `.partial-*` folder, `trainer_state.json` is written last, and the folder is renamed into place. A killed write
 * leaves only a `.partial-*` folder, which is never loaded and is removed by the next save.
 */
export async function saveCheckpoint(
  runDir: string,
  step: number,
  seed: number,
  groups: TrainedWorkerGroup[],
  states: Checkpointable[],
  keepLast: number,
): Promise<string> {
  const root = path.join(runDir, CHECKPOINTS_DIR);
  mkdirSync(root, { recursive: true });
  for (const name of readdirSync(root)) {
    if (name.startsWith('.partial-')) rmSync(path.join(root, name), { recursive: true, force: true });
  }
  const partial = path.join(root, `.partial-${checkpointDirName(step)}-${process.pid}`);
  mkdirSync(partial, { recursive: true });
  for (const group of groups) await group.trainer.save(path.join(partial, group.id), { optimizer: true });
  const state: TrainerState = {
    step,
    seed,
    workerGroups: groups.map((g) => g.id),
    states: Object.fromEntries(states.map((s) => [s.key, s.getState()])),
  };
  const stateFile = path.join(partial, CHECKPOINT_STATE_FILE);
  writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  const fd = openSync(stateFile, 'r');
  fsyncSync(fd);
  closeSync(fd);
  fsyncDir(partial);
  const final = path.join(root, checkpointDirName(step));
  if (existsSync(final)) rmSync(final, { recursive: true, force: true });
  renameSync(partial, final);
  fsyncDir(root);
  const complete = listCheckpoints(runDir);
  for (const old of complete.slice(0, Math.max(0, complete.length - keepLast))) rmSync(old.dir, { recursive: true, force: true });
  return final;
}

/** Restores every worker group's weights and optimizer and every saved state; returns the checkpoint's step. */
export async function restoreCheckpoint(dir: string, groups: TrainedWorkerGroup[], states: Checkpointable[]): Promise<TrainerState> {
  const state = readTrainerState(dir);
  for (const group of groups) {
    await group.trainer.load(path.join(dir, group.id), { optimizer: true });
    if (group.rollout !== group.trainer) await group.rollout.syncWeights(group.trainer);
  }
  for (const checkpointable of states) {
    if (checkpointable.key in state.states) checkpointable.setState(state.states[checkpointable.key]);
  }
  return state;
}
