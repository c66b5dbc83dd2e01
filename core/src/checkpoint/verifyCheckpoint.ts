import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DrmasError } from '../errors/DrmasError.js';
import {
  asCheckpointError,
  CHECKPOINT_FORMAT,
  CHECKPOINT_STATE_FILE,
  CHECKPOINTS_DIR,
  checkpointError,
  checkpointStepOf,
  checkWorkerGroups,
  listCheckpoints,
  readTrainerState,
  type TrainerState,
} from './checkpointLayout.js';
import { CHECKPOINT_MANIFEST_FILE, readCheckpointManifest, verifyCheckpointManifest } from './checkpointManifest.js';
import { verifyLegacyModelFolder } from './legacyCheckpoint.js';

export interface VerifiedCheckpoint {
  dir: string;
  state: TrainerState;
  /** Written before checkpoints carried a manifest: only its state and the safetensors sizes could be checked. */
  legacy: boolean;
}

/**
 * Checks that a checkpoint folder can be resumed, or throws CHECKPOINT_INVALID naming the file at fault: with a
 * manifest, every file it lists is present with its size and sha256; without one (a checkpoint written before
 * manifests), trainer_state.json parses and each worker group's safetensors files are as long as their headers say.
 * trainer_state.json must fit its schema and, given `workerGroups`, hold exactly the run's worker groups, each with
 * its folder.
 */
export async function verifyCheckpoint(dir: string, options: { workerGroups?: readonly string[] } = {}): Promise<VerifiedCheckpoint> {
  try {
    return await verifyCheckpointFiles(dir, options);
  } catch (error) {
    throw asCheckpointError(error, dir);
  }
}

async function verifyCheckpointFiles(dir: string, options: { workerGroups?: readonly string[] }): Promise<VerifiedCheckpoint> {
  const manifest = await readCheckpointManifest(dir);
  let state: TrainerState;
  if (manifest) {
    await verifyCheckpointManifest(dir, manifest);
    state = readTrainerState(dir);
  } else {
    state = readTrainerState(dir);
    if ((state.format ?? 1) >= CHECKPOINT_FORMAT) {
      throw checkpointError(
        path.join(dir, CHECKPOINT_MANIFEST_FILE),
        `${CHECKPOINT_MANIFEST_FILE} is missing, though ${CHECKPOINT_STATE_FILE} says the checkpoint was written with one (format ${state.format})`,
      );
    }
  }
  if (options.workerGroups) checkWorkerGroups(dir, state.workerGroups, options.workerGroups);
  for (const id of state.workerGroups) {
    const folder = path.join(dir, id);
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      throw checkpointError(folder, `the folder of worker group "${id}" is missing (${CHECKPOINT_STATE_FILE} lists the group)`);
    }
    if (!manifest) await verifyLegacyModelFolder(folder);
  }
  return { dir, state, legacy: !manifest };
}

/** What `--resume` resolved to: the checkpoint to continue from, and the newer ones passed over and why. */
export interface ResumeChoice {
  runDir: string;
  checkpoint: VerifiedCheckpoint;
  /** Checkpoints newer than the one chosen that failed verification, newest first. */
  skipped: Array<{ dir: string; error: DrmasError }>;
}

function isCheckpointFolder(target: string): boolean {
  return (
    checkpointStepOf(target) !== undefined ||
    existsSync(path.join(target, CHECKPOINT_STATE_FILE)) ||
    existsSync(path.join(target, CHECKPOINT_MANIFEST_FILE))
  );
}

/** The newest run under `outputDir` (by modification time) that has a checkpoint folder. */
function newestRunWithCheckpoints(outputDir: string): string | undefined {
  if (!existsSync(outputDir)) return undefined;
  return readdirSync(outputDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(outputDir, entry.name))
    .filter((dir) => listCheckpoints(dir).length > 0)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/**
 * Finds what `--resume` names: a checkpoint folder (which must verify), a run directory (its newest checkpoint that
 * verifies), or `auto` (the same in `runDir`, or in the newest run under `outputDir` with checkpoints when no run
 * directory was given). `workerGroups` are the run's, which a checkpoint must hold. Undefined when `auto` finds no
 * checkpoint folder at all: the run starts from the beginning.
 */
export async function resolveResume(
  spec: string,
  options: { runDir?: string; outputDir: string; workerGroups?: readonly string[] },
): Promise<ResumeChoice | undefined> {
  let runDir: string | undefined;
  if (spec !== 'auto') {
    const target = path.resolve(spec);
    if (!existsSync(target)) {
      throw new DrmasError('INVALID_ARGUMENT', `${target} does not exist`, {
        key: '--resume',
        hint: 'give a checkpoints/step-NNNNNN folder of a run, a run directory, or auto',
      });
    }
    if (isCheckpointFolder(target)) {
      const checkpoint = await verifyCheckpoint(target, { workerGroups: options.workerGroups });
      return { runDir: path.dirname(path.dirname(target)), checkpoint, skipped: [] };
    }
    runDir = target;
  } else {
    runDir = options.runDir ?? newestRunWithCheckpoints(options.outputDir);
  }
  const candidates = runDir ? listCheckpoints(runDir).reverse() : [];
  if (!runDir || candidates.length === 0) {
    if (spec === 'auto') return undefined;
    throw new DrmasError('INVALID_ARGUMENT', `nothing to resume: ${runDir} has no checkpoint`, {
      key: '--resume',
      hint: 'checkpoints are written every trainer.saveEvery steps and at the end; start without --resume',
    });
  }
  const skipped: ResumeChoice['skipped'] = [];
  for (const candidate of candidates) {
    try {
      return { runDir, checkpoint: await verifyCheckpoint(candidate.dir, { workerGroups: options.workerGroups }), skipped };
    } catch (error) {
      if (!DrmasError.is(error) || error.code !== 'CHECKPOINT_INVALID') throw error;
      skipped.push({ dir: candidate.dir, error });
    }
  }
  throw new DrmasError(
    'CHECKPOINT_INVALID',
    `none of the ${skipped.length} checkpoints of ${runDir} can be resumed: ` +
      skipped.map((s) => `${path.basename(s.dir)}: ${s.error.message} (${s.error.file})`).join('; '),
    {
      file: path.join(runDir, CHECKPOINTS_DIR),
      hint:
        'if the config changed since, resume with the one that wrote them (config.json in the run directory); otherwise start ' +
        'afresh without --resume (the earlier run files are moved aside)',
    },
  );
}
