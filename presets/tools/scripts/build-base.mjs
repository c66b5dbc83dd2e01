#!/usr/bin/env node
// Rebuilds checkpoints/base/policy: teacher demonstrations of the tools workflow, then `drmas sft` of `tiny`.
// Usage (after `npm run build` at the repository root):
//   npm run build-base -w @drmas/preset-tools [-- --rounds N --epochs N --lr X --seed S --prompt-loss-weight W --from CHECKPOINT --out DIR]
import { parseArgs } from 'node:util';
import path from 'node:path';
import { buildToolsBase, PRESET_DIR } from '../dist/buildBase.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    epochs: { type: 'string', default: '1' },
    lr: { type: 'string', default: '2e-3' },
    seed: { type: 'string', default: '0' },
    'prompt-loss-weight': { type: 'string', default: '0' },
    from: { type: 'string' },
    out: { type: 'string', default: path.join(PRESET_DIR, 'checkpoints', 'base') },
  },
});
process.exitCode = await buildToolsBase({
  rounds: Number(values.rounds),
  epochs: Number(values.epochs),
  lr: Number(values.lr),
  seed: Number(values.seed),
  promptLossWeight: Number(values['prompt-loss-weight']),
  from: values.from,
  workDir: path.join(PRESET_DIR, '..', '..', '.drmas-cache', 'preset-tools-base'),
  outDir: path.resolve(values.out),
});
