#!/usr/bin/env node
// Rebuilds checkpoints/base/policy: teacher demonstrations of the code workflow, then `drmas sft` of `tiny`.
// Usage (after `npm run build` at the repository root): npm run build-base -w @drmas/preset-code [-- --rounds N --epochs N --lr X --seed S --out DIR]
import { parseArgs } from 'node:util';
import path from 'node:path';
import { buildCodeBase, PRESET_DIR } from '../dist/buildBase.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    epochs: { type: 'string', default: '1' },
    lr: { type: 'string', default: '2e-3' },
    seed: { type: 'string', default: '0' },
    out: { type: 'string', default: path.join(PRESET_DIR, 'checkpoints', 'base') },
  },
});
process.exitCode = await buildCodeBase({
  rounds: Number(values.rounds),
  epochs: Number(values.epochs),
  lr: Number(values.lr),
  seed: Number(values.seed),
  workDir: path.join(PRESET_DIR, '..', '..', '.drmas-cache', 'preset-code-base'),
  outDir: path.resolve(values.out),
});
