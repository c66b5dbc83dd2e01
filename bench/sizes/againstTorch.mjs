// Generation and training tokens per second at a real model size: drmas's onnx engine against transformers' model
// of the same checkpoint on PyPI's PyTorch 2.x (the trl environment of scripts/python-env.sh), alternating, each run
// its own process (bench/sizes/tokensPerSecond.mjs and bench/sizes/torch_tokens.py: the same tokens, the same loss).
//
//   node bench/sizes/againstTorch.mjs MODEL_DIR [--rows 16] [--prompt 60] [--new 128] [--rounds 2]
//     [--modes generate,train] [--torch 2xfp32,2xbf16] [--torch-micro-batch 4] [--lora RANK] [--records FILE]
//     [--write NAME]
//
// PyTorch runs in every setting of --torch (threads x precision; bf16 is float32 weights under bf16 autocast), and
// its fastest median is the reference. Rounds alternate which engine goes first. drmas trains with its defaults at
// the size (the memory budget `drmas train` takes, its micro-batches and segments). --lora RANK trains a LoRA adapter
// of that rank on every projection of the frozen base, both sides. The figures are medians; the
// last line gives drmas over the fastest PyTorch setting, and drmas's training GFLOP/s (the model's nominal matmul
// FLOPs, 3x the forward, 2x with LoRA, the head on every token) against onnxruntime's own matmul ceiling measured after
// the runs.
// --write NAME puts the table into bench/RESULTS.md's section `against-torch/NAME`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { readModelShape } from '@drmas/models';
import { BENCH_DIR, REPO_ROOT } from '../lib/benchOptions.mjs';
import { matmulCeiling } from '../lib/matmulCeiling.mjs';
import { pythonOfEnv } from '../lib/pythonEnvs.mjs';
import { replaceWholeSection } from '../lib/resultsSections.mjs';
import { decoderTrainingFlops, median, shapeOf } from '../lib/workloads.mjs';

/** Stops with `message` (no stack: every failure here is the command line's or a child's, which says its own). */
function fail(message, code = 1) {
  console.error(`bench/sizes/againstTorch: ${message}`);
  process.exit(code);
}
let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      rows: { type: 'string', default: '16' },
      prompt: { type: 'string', default: '60' },
      new: { type: 'string', default: '128' },
      rounds: { type: 'string', default: '2' },
      modes: { type: 'string', default: 'generate,train' },
      torch: { type: 'string', default: '2xfp32,2xbf16' },
      'torch-micro-batch': { type: 'string', default: '4' },
      lora: { type: 'string', default: '0' },
      records: { type: 'string' },
      write: { type: 'string' },
    },
  });
} catch (error) {
  fail(`${error.message} (see the first lines of bench/sizes/againstTorch.mjs)`, 2);
}
const { values, positionals } = parsed;
const [model] = positionals;
if (!model) fail('usage: node bench/sizes/againstTorch.mjs MODEL_DIR [--rows 16] [--prompt 60] [--new 128] [--rounds 2] ...', 2);
if (!existsSync(join(model, 'config.json')))
  fail(`${model} holds no config.json: give a model folder as transformers saves it (bench/sizes/randomCheckpoint.mjs writes one)`, 2);
const [rows, prompt, fresh, rounds] = [values.rows, values.prompt, values.new, values.rounds].map(Number);
for (const [key, value] of Object.entries({ rows, prompt, new: fresh, rounds }))
  if (!Number.isInteger(value) || value < 1) fail(`--${key} is "${values[key]}": give a whole number of at least 1`, 2);
const modes = values.modes.split(',');
for (const mode of modes) if (!['generate', 'train'].includes(mode)) fail(`--modes: "${mode}" is neither generate nor train`, 2);
const torchSettings = values.torch.split(',').map((s) => {
  const match = /^(\d+)x(fp32|bf16)$/.exec(s);
  if (!match) fail(`--torch: "${s}" is not THREADSxPRECISION (2xfp32, 2xbf16)`, 2);
  return { name: s, threads: match[1], precision: match[2] };
});
const python = values.records ? undefined : pythonOfEnv('trl');
if (!values.records && !python) fail('the trl Python environment is not installed (bash scripts/python-env.sh trl)');

function run(command, args, env = process.env) {
  const started = loadavg()[0];
  const child = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 1 << 26, env });
  const line = (child.stdout ?? '')
    .trim()
    .split('\n')
    .findLast((l) => l.startsWith('{'));
  if (child.status !== 0 || !line) fail(`${command} ${args.join(' ')} failed (exit ${child.status}):\n${child.stderr.slice(-3000)}`);
  return { ...JSON.parse(line), loadBefore: +started.toFixed(2), loadAfter: +loadavg()[0].toFixed(2) };
}

function drmasRun(mode) {
  const args = ['bench/sizes/tokensPerSecond.mjs', mode, model, String(rows), String(prompt), String(fresh)];
  return run(process.execPath, args, { ...process.env, LORA: values.lora });
}

function torchRun(mode, setting) {
  const shape = ['--rows', String(rows), '--prompt', String(prompt), mode === 'generate' ? '--new' : '--response', String(fresh)];
  const extra = mode === 'train' ? ['--micro-batch', values['torch-micro-batch'], '--lora-rank', values.lora] : [];
  return run(python, [
    'bench/sizes/torch_tokens.py',
    mode,
    model,
    ...shape,
    ...extra,
    '--threads',
    setting.threads,
    '--precision',
    setting.precision,
  ]);
}

const records = values.records
  ? readFileSync(values.records, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
  : [];
if (!values.records) {
  for (let round = 0; round < rounds; round++)
    for (const mode of modes) {
      const sides = [() => [drmasRun(mode)], () => torchSettings.map((s) => torchRun(mode, s))];
      if (round % 2 === 1) sides.reverse();
      for (const side of sides)
        for (const record of side()) {
          const full = { ...record, round, model: basename(model) };
          records.push(full);
          console.log(JSON.stringify(full));
        }
    }
}

const config = readModelShape(model);
let ceiling = records.find((r) => r.ceilingGflops)?.ceilingGflops;
if (!values.records) {
  ceiling = await matmulCeiling();
  records.push({ ceilingGflops: +ceiling.toFixed(1) });
  console.log(JSON.stringify(records.at(-1)));
}
const lines = [
  `\`node bench/sizes/againstTorch.mjs ${basename(model)} --rows ${rows} --prompt ${prompt} --new ${fresh} --rounds ${rounds}` +
    `${values.lora !== '0' ? ` --lora ${values.lora}` : ''}\` ` +
    `(${config.numLayers} layers, hidden ${config.hiddenSize}, vocabulary ${config.vocabSize}); ${rows} rows of ${prompt} prompt ` +
    `tokens, ${fresh} new (generated, or trained as the response); medians over rounds, engines alternating.`,
  '',
  '| mode | engine | setting | runs | seconds | tokens/s | x fastest PyTorch | peak RSS (GiB) | load at start |',
  '|---|---|---|---:|---:|---:|---:|---:|---|',
];
const summary = [];
for (const mode of modes) {
  const groups = new Map();
  for (const r of records.filter((r) => r.mode === mode)) {
    const key = `${r.engine}|${r.engine === 'drmas' ? 'defaults' : r.setting}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rowsOf = [...groups].map(([key, rs]) => {
    const [engine, setting] = key.split('|');
    return { engine, setting: rs.at(-1).setting ?? setting, rs, perSecond: median(rs.map((r) => r.tokensPerSecond)) };
  });
  const fastestTorch = Math.max(...rowsOf.filter((g) => g.engine === 'pytorch').map((g) => g.perSecond));
  for (const g of rowsOf) {
    const ratio = g.perSecond / fastestTorch;
    lines.push(
      `| ${mode} | ${g.engine} | ${g.setting} | ${g.rs.length} | ${median(g.rs.map((r) => r.seconds)).toFixed(2)} | ${g.perSecond.toFixed(1)} | ` +
        `${ratio.toFixed(2)} | ${Math.max(...g.rs.map((r) => r.peakRssGiB)).toFixed(2)} | ${g.rs.map((r) => r.loadBefore).join(' / ')} |`,
    );
    if (g.engine === 'drmas') {
      summary.push(`${mode}: drmas ${ratio.toFixed(2)}x the fastest PyTorch setting`);
      if (mode === 'train' && ceiling) {
        // LoRA computes no frozen weight's gradient: the forward and the backward's input gradients, 2x the forward.
        const share = values.lora !== '0' ? 2 / 3 : 1;
        const flops = share * decoderTrainingFlops(shapeOf(config), rows, prompt + fresh);
        const gflops = flops / median(g.rs.map((r) => r.seconds)) / 1e9;
        summary.push(
          `drmas training ${gflops.toFixed(1)} GFLOP/s, ${((100 * gflops) / ceiling).toFixed(0)}% of onnxruntime's matmul ceiling (${ceiling.toFixed(1)} GFLOP/s, 2048^3, after the runs)`,
        );
      }
    }
  }
}
lines.push('', `${summary.join('; ')}.`);
const text = lines.join('\n');
console.log(`\n${text}`);
if (values.write) {
  const file = join(BENCH_DIR, 'RESULTS.md');
  const withRecords = `${text}\n\nRecords (JSON lines):\n\n\`\`\`\n${records.map((r) => JSON.stringify(r)).join('\n')}\n\`\`\``;
  writeFileSync(file, replaceWholeSection(readFileSync(file, 'utf8'), `against-torch/${values.write}`, withRecords));
}
