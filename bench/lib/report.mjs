// Renders bench/RESULTS.md from the measurements.
const fmt = (x, digits = 0) => (x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits));

export function renderResults({
  machine,
  records,
  summary,
  notices,
  rounds,
  grid,
  fastest,
  microBatch,
  tfjsTrainRounds,
  gridRounds,
  fromLog,
}) {
  const lines = [];
  const push = (...l) => lines.push(...l);
  push('# drmas benchmark results', '');
  push(`Written by \`node bench/run.mjs --rounds ${rounds}\` (\`npm run bench -- --rounds ${rounds}\`) on ${new Date().toISOString()}.`);
  push(`Throughputs are medians over ${rounds} rounds that alternate the engines (their order rotating each round), one`);
  push('measured run per engine per round after a warm-up run, each measurement in its own child process (its peak RSS');
  push(
    `is its own). ${tfjsTrainRounds ? `tfjs training runs in the first ${tfjsTrainRounds} round(s) only (it is the slow reference).` : 'tfjs training is not measured (`--tfjs-train-rounds 0`).'}`,
  );
  if (fromLog)
    push(
      `Rendered with \`--from-log\` from earlier runs' output (several runs merged, or one stopped early): only what they measured is here, and the runs column counts each workload's rounds.`,
    );
  push('');

  push('## Machine', '');
  push('| | |', '|---|---|');
  push(`| CPU | ${machine.cpu} |`, `| cores | ${machine.cores} |`, `| memory | ${machine.memoryGiB} GiB |`);
  push(
    `| Node | ${machine.node} |`,
    `| onnxruntime-node | ${machine.onnxruntime} |`,
    `| tfjs | ${machine.tfjs} |`,
    `| torch | ${machine.torch} |`,
    `| OPENBLAS_CORETYPE in the environment | ${machine.inheritedOpenblasCoretype} |`,
  );
  push(
    `| load average (1, 5, 15 min) at start / end | ${machine.loadAverageAtStart.join(', ')} / ${machine.loadAverageAtEnd?.join(', ') ?? 'not recorded'} |`,
    '',
  );
  push('The machine is shared with other work (the load average above, on its cores): absolute numbers move by up to');
  push('several times between runs under load; the alternating rounds keep the ratios between engines more stable than');
  push('the absolute values, and CPU seconds per step (user + system, every thread) are less moved by load than wall time.', '');
  if (notices.length) {
    push('## Notices', '');
    for (const n of notices) push(`- ${n}`);
    push('');
  }

  if (grid.length) {
    push('## PyTorch settings (the fastest is the reference)', '');
    push("Debian's torch 1.13 calls BLAS through `libblas.so.3` (`torch.__config__.show()`: `BLAS_INFO=generic`; the");
    push('alternatives system points it at an installed OpenBLAS, else the reference BLAS). Each setting runs in its own');
    push(`process: a 2048^3 matmul (median of 3), one training round of tiny (32 x 256 tokens, micro-batch ${microBatch}) and one`);
    push(`generation run of tiny, each after a warm-up; ${gridRounds} round(s) of the grid. "OpenBLAS kernels" is what`);
    push('`openblas_get_corename()` reports in that process.', '');
    push('| setting | OpenBLAS kernels | matmul GFLOP/s | training tiny tokens/s | generation tiny tokens/s |', '|---|---|---:|---:|---:|');
    for (const g of grid)
      push(
        `| ${g.label} | ${g.core ?? '–'} | ${fmt(g.matmulGflops, 1)} | ${fmt(g.trainTokensPerSecond)} | ${fmt(g.generateTokensPerSecond)} |`,
      );
    push('');
    push(
      `Fastest: training — ${fastest.train?.label ?? '–'}; generation — ${fastest.generate?.label ?? '–'}; matmul — ${fastest.matmul?.label ?? '–'}.`,
    );
    push('Each workload below runs PyTorch in its fastest setting.', '');
  }

  push('## Throughput', '');
  push('Generation: batch 32, 32-token prompts, 96 new tokens (sampling at temperature 1, no stop ids). Training: batch');
  push('32 x 256 tokens (32 prompt + 224 response), one full update: forward, loss, backward per micro-batch with the');
  push('gradients accumulated, gradient-norm clipping and AdamW (onnx: `OnnxTrainer.update` through the backend; tfjs: the');
  push("backend's update; PyTorch: `loss.backward()` per micro-batch, `clip_grad_norm_`, `torch.optim.AdamW`). GFLOP/s counts");
  push("the model's nominal matmul FLOPs (projections, lm head, attention products; training 3x forward) over the measured");
  push('time; the ceiling is the same engine\'s 2048x2048 matmul. "x PyTorch (CPU s)" compares tokens per CPU-second.', '');
  push(
    '| workload | model | engine | runtime | micro-batch | tokens/s | x fastest PyTorch | x PyTorch (CPU s) | GFLOP/s | % of matmul ceiling | peak RSS (MiB) | runs |',
  );
  push('|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of summary) {
    const pct = r.ceilingGflops ? (100 * r.gflops) / r.ceilingGflops : undefined;
    push(
      `| ${r.bench === 'generate' ? 'generation' : 'training'} | ${r.model} | ${r.engine} | ${r.runtime} | ${r.microBatchSize ?? '–'} | ${fmt(r.tokensPerSecond)} | ${fmt(r.ratioToPytorch, 2)} | ${fmt(r.cpuRatioToPytorch, 2)} | ${fmt(r.gflops, 1)} | ${fmt(pct, 1)} | ${fmt(r.peakRssMiB)} | ${r.samples} |`,
    );
  }
  push('', 'Each round (tokens/s):', '');
  for (const r of summary) push(`- ${r.bench} ${r.model} ${r.engine}: ${r.each.map((t) => fmt(t)).join(' / ')}`);
  push('');

  push('### Matmul ceilings (2048 x 2048 x 2048, median of 5)', '');
  push('| engine | runtime | GFLOP/s |', '|---|---|---:|');
  for (const r of records.filter((x) => x.bench === 'matmul')) push(`| ${r.engine} | ${r.runtime} | ${fmt(r.gflops, 1)} |`);
  push('');

  push('## Targets (issue 19)', '');
  const target = (bench, engine, goal, what) => {
    for (const r of summary.filter((x) => x.bench === bench && x.engine === engine)) {
      if (r.ratioToPytorch === undefined) {
        push(`- ${what}, ${r.model}: no PyTorch measurement.`);
        continue;
      }
      const met = r.ratioToPytorch >= goal;
      push(
        `- ${what} >= ${goal}x the fastest PyTorch, ${r.model}: ${fmt(r.ratioToPytorch, 2)}x — ${met ? 'met' : `missed (${fmt(r.tokensPerSecond)} tokens/s, ${goal}x would be ${fmt((goal * r.tokensPerSecond) / r.ratioToPytorch)})`}.`,
      );
    }
  };
  target('train', 'onnx', 1.5, 'onnx training');
  target('generate', 'onnx', 2, 'onnx generation');
  push('');
  push("What limits onnx generation here (from onnxruntime's profiler, per-op timing of a `small` run): MatMul kernels are");
  push('~75-80% of the time inside onnxruntime; the rest is many small element-wise ops (rope, softmax, residuals). With');
  push('the weights as graph inputs, MLAS packs every weight matrix again on every run (it pre-packs only constant');
  push('initializers). On a shared machine, CPU contention dominates: onnxruntime runs with non-spinning intra-op threads');
  push('for that reason (spinning measured 2-2.5x slower under load).', '');

  const sync = records.filter((r) => r.bench === 'sync');
  if (sync.length) {
    push('## Weight sync: weights as graph inputs vs initializers (small)', '');
    push('| weights | generation tokens/s (median of 3) | sync + first token (s, median of 3) |', '|---|---:|---:|');
    for (const r of sync) push(`| ${r.weightMode} | ${fmt(r.tokensPerSecond)} | ${fmt(r.syncSeconds, 3)} |`);
    push('', 'Inputs: `syncWeights` re-derives the graph weights (transposed, fused q|k|v and gate|up) into new host buffers;');
    push('the sessions are untouched. Initializers: the sessions are rebuilt with the new weights.', '');
  }

  const rl = records.filter((r) => r.bench === 'rl-proxy');
  if (rl.length) {
    push('## RL step proxy: rollout on onnx vs on tfjs, tfjs trainer (`--rl-proxy`)', '');
    push('Per step, a rollout of 2 agents x batch 16 x 64 new tokens on the rollout engine, one tfjs training step on those');
    push('32 rows, then (onnx only) `syncWeights`. The main job itself is measured by `npm run bench:main-job`.', '');
    push('| rollout engine | rollout (s) | train (s) | sync (s) | step (s) | peak RSS (MiB) |', '|---|---:|---:|---:|---:|---:|');
    for (const r of rl)
      push(
        `| ${r.engine} (${r.runtime}) | ${fmt(r.rolloutSeconds, 2)} | ${fmt(r.trainSeconds, 2)} | ${fmt(r.syncSeconds, 3)} | ${fmt(r.stepSeconds, 2)} | ${fmt(r.peakRssMiB)} |`,
      );
    push('');
  }

  push('## All measurements (JSON lines)', '', '```');
  for (const r of records) push(JSON.stringify(r));
  push('```', '');
  return lines.join('\n');
}
