#!/usr/bin/env node
// Rebuilds checkpoints/base/policy: teacher debates on arithmetic questions, then `drmas sft` continuing from the math preset's base.
// Usage (after `npm run build` at the repository root): npm run build-base -w @drmas/preset-debate [-- --rounds N --epochs N --lr X --seed S --wrong-rate R --out DIR]
import { parseArgs } from 'node:util';
import path from 'node:path';
import { buildDebateBase, PRESET_DIR } from '../dist/buildBase.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    epochs: { type: 'string', default: '1' },
    lr: { type: 'string', default: '2e-4' },
    seed: { type: 'string', default: '0' },
    'wrong-rate': { type: 'string', default: '0.3' },
    out: { type: 'string', default: path.join(PRESET_DIR, 'checkpoints', 'base') },
  },
});
process.exitCode = await buildDebateBase({
  rounds: Number(values.rounds),
  epochs: Number(values.epochs),
  lr: Number(values.lr),
  seed: Number(values.seed),
  wrongRate: Number(values['wrong-rate']),
  workDir: path.join(PRESET_DIR, '..', '..', '.drmas-cache', 'preset-debate-base'),
  outDir: path.resolve(values.out),
});
