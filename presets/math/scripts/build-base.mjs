#!/usr/bin/env node
// Rebuilds checkpoints/base/policy: teacher demonstrations of the math workflow, then `drmas sft` of `tiny`.
// Usage (after `npm run build` at the repository root): npm run build-base -w @drmas/preset-math [-- --rounds N --epochs N --lr X --seed S --from CHECKPOINT --out DIR]
import { parseArgs } from 'node:util';
import path from 'node:path';
import { buildMathBase, PRESET_DIR } from '../dist/buildBase.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '90' },
    epochs: { type: 'string', default: '1' },
    lr: { type: 'string', default: '2e-3' },
    seed: { type: 'string', default: '0' },
    from: { type: 'string' },
    out: { type: 'string', default: path.join(PRESET_DIR, 'checkpoints', 'base') },
  },
});
process.exitCode = await buildMathBase({
  rounds: Number(values.rounds),
  epochs: Number(values.epochs),
  lr: Number(values.lr),
  seed: Number(values.seed),
  from: values.from,
  workDir: path.join(PRESET_DIR, '..', '..', '.drmas-cache', 'preset-math-base'),
  outDir: path.resolve(values.out),
});
