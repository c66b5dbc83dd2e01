import { createToken } from '../di/Token.js';

/**
 * A file or folder a plugin writes into the run directory, so that the run directory's owner can keep it consistent:
 * `steps` files (JSON lines, each with its `step`) are cut to the checkpoint's step on resume, and everything is
 * moved aside with the earlier run when a run starts afresh in a used folder. Bind one per path:
 * `ctx.bind(RunFile).toConstantValue({ path: 'eval.jsonl', kind: 'steps' })`.
 */
export interface RunFile {
  /** Relative to the run directory. */
  readonly path: string;
  /** `steps`: appended one line per step and cut on resume; `artifact`: anything else the run leaves. */
  readonly kind: 'steps' | 'artifact';
}
export const RunFile = createToken<RunFile>('RunFile', { label: 'run file' });
