import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { CHECKPOINT_FORMAT, CHECKPOINT_STATE_FILE, checkpointError, describeIssues, parseCheckpointJson } from './checkpointLayout.js';

/** The last file a checkpoint writer writes: the size and sha256 of every other file, relative to the folder. */
export const CHECKPOINT_MANIFEST_FILE = 'manifest.json';

export interface ManifestEntry {
  /** Relative to the checkpoint folder, with `/` separators. */
  path: string;
  size: number;
  sha256: string;
}

export interface CheckpointManifest {
  format: number;
  files: ManifestEntry[];
}

const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').some((part) => part === '..' || part === '' || part === '.'), {
    message: 'must be a relative path inside the checkpoint folder',
  });

const manifestSchema = z.object({
  format: z.number().int().positive(),
  files: z.array(z.object({ path: relativePath, size: z.number().int().nonnegative(), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
});

/** The sha256 of a file, read as a stream (checkpoint files run to hundreds of MB). */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), hash);
  return hash.digest('hex');
}

async function filesUnder(root: string, relative = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const rel = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await filesUnder(root, rel)));
    else if (entry.isFile() && rel !== CHECKPOINT_MANIFEST_FILE) files.push(rel);
  }
  return files;
}

/** Hashes every file of a finished checkpoint folder and writes its `manifest.json` (fsynced); returns the manifest. */
export async function writeCheckpointManifest(dir: string): Promise<CheckpointManifest> {
  const files: ManifestEntry[] = [];
  for (const rel of await filesUnder(dir)) {
    const file = path.join(dir, ...rel.split('/'));
    files.push({ path: rel, size: (await stat(file)).size, sha256: await sha256File(file) });
  }
  const manifest: CheckpointManifest = { format: CHECKPOINT_FORMAT, files };
  const target = path.join(dir, CHECKPOINT_MANIFEST_FILE);
  await writeFile(target, `${JSON.stringify(manifest, null, 2)}\n`);
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  return manifest;
}

/** Reads and validates `manifest.json`; undefined when the folder has none. */
export async function readCheckpointManifest(dir: string): Promise<CheckpointManifest | undefined> {
  const file = path.join(dir, CHECKPOINT_MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw checkpointError(file, `cannot read ${CHECKPOINT_MANIFEST_FILE}: ${(error as Error).message}`);
  }
  const raw = parseCheckpointJson(file, text);
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) throw checkpointError(file, `${CHECKPOINT_MANIFEST_FILE} is malformed: ${describeIssues(parsed.error.issues, raw)}`);
  if (parsed.data.format > CHECKPOINT_FORMAT) {
    throw checkpointError(
      file,
      `the checkpoint has format ${parsed.data.format}; this drmas reads formats up to ${CHECKPOINT_FORMAT}`,
      'it was written by a newer drmas: upgrade @drmas/core to resume it',
    );
  }
  if (!parsed.data.files.some((entry) => entry.path === CHECKPOINT_STATE_FILE)) {
    throw checkpointError(file, `${CHECKPOINT_MANIFEST_FILE} does not list ${CHECKPOINT_STATE_FILE}`);
  }
  return parsed.data;
}

/**
 * Checks every file the manifest lists: present, of its size (all sizes first, as that is cheap), then of its
 * sha256. The first file that fails is named in a CHECKPOINT_INVALID error.
 */
export async function verifyCheckpointManifest(dir: string, manifest: CheckpointManifest): Promise<void> {
  const manifestFile = path.join(dir, CHECKPOINT_MANIFEST_FILE);
  for (const entry of manifest.files) {
    const file = path.join(dir, ...entry.path.split('/'));
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw checkpointError(file, `cannot read ${entry.path}: ${(error as Error).message}`);
      throw checkpointError(file, `${entry.path} is missing (${CHECKPOINT_MANIFEST_FILE} lists it with ${entry.size} bytes)`);
    }
    if (size < entry.size) throw checkpointError(file, `${entry.path} is truncated: expected ${entry.size} bytes, found ${size}`);
    if (size > entry.size) throw checkpointError(file, `${entry.path} has ${size} bytes, ${CHECKPOINT_MANIFEST_FILE} says ${entry.size}`);
  }
  for (const entry of manifest.files) {
    const file = path.join(dir, ...entry.path.split('/'));
    let actual: string;
    try {
      actual = await sha256File(file);
    } catch (error) {
      throw checkpointError(file, `cannot read ${entry.path}: ${(error as Error).message}`);
    }
    if (actual !== entry.sha256) {
      throw checkpointError(
        file,
        `${entry.path} does not match ${path.basename(manifestFile)}: sha256 ${actual}, expected ${entry.sha256} (its bytes changed after it was written)`,
      );
    }
  }
}
