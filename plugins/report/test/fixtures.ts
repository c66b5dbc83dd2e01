import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const CONFIG = {
  presets: ['math'],
  plugins: ['algorithms', 'backend-tfjs'],
  models: { policy: { backend: 'tfjs', model: 'tiny' }, judge: { backend: 'tfjs', model: 'small' } },
  agents: { solver: { model: 'policy' }, verifier: { model: 'judge' } },
  algorithm: { advantage: 'drmas' },
  trainer: { steps: 6, seed: 7, outputDir: 'runs', saveEvery: 0, keepLast: 3 },
  eval: { every: 2, atEnd: true },
};

/** Six steps: two worker groups, validation every second step, a NaN loss, and timing. */
type MetricLine = { step: number } & Record<string, number>;

export function metricLines(): MetricLine[] {
  const lines: MetricLine[] = [];
  for (let step = 1; step <= 6; step++) {
    const line: MetricLine = {
      step,
      'outcome/mean': 0.1 * step,
      'outcome/std': 0.05 + 0.01 * step,
      'reward/mean': step === 4 ? 0.9 : 0.1 * step - 0.05,
      'actor/policy/grad_norm': 10 / step,
      'actor/judge/grad_norm': 0.01 * step,
      'actor/policy/pg_loss': -0.01 * step,
      'actor/judge/pg_loss': 0.02 * step,
      'actor/policy/entropy': 2 - 0.1 * step,
      'response_length/mean': 30 + step,
      'rollout/valid_frac': 0.8 + 0.02 * step,
      'timing/rollout': 1.5,
      'timing/update': 0.5 + 0.1 * step,
      'timing/step': 2.2 + 0.1 * step,
      'perf/tokens_per_s': 100 * step,
    };
    if (step % 2 === 0) {
      line['val/avg@16'] = 0.2 + 0.05 * step;
      line['val/pass@16'] = 0.5 + 0.05 * step;
      line['val/gsm8k/avg@16'] = 0.1 * step;
      line['val/math/avg@16'] = 0.05 * step;
    }
    lines.push(line);
  }
  return lines;
}

export const ROLLOUTS = [
  { step: 5, agentId: 'solver', reward: 0, valid: true, promptText: 'old step', responseText: 'old' },
  {
    step: 6,
    agentId: 'solver',
    reward: 1,
    valid: true,
    promptText: 'What is 2+2? See https://example.com/q',
    responseText: '<script>alert("x")</script> The answer is \\boxed{4} & done',
    promptIds: Array.from({ length: 40 }, (_, i) => i),
  },
  { step: 6, agentId: 'verifier', reward: 1, valid: false, invalidReason: 'no verdict', responseText: 'looks </script><b>right</b>' },
];

/** A run directory as a killed run leaves it: the last metrics line half written, one line with a bare NaN. */
export function syntheticRunDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'drmas-report-'));
  writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(CONFIG, null, 2)}\n`);
  const lines = metricLines().map((l) => JSON.stringify(l));
  // Python writes NaN bare; the report must read it.
  lines[2] = lines[2]!.replace(/"actor\/judge\/pg_loss":[^,]+/, '"actor/judge/pg_loss":NaN');
  writeFileSync(path.join(dir, 'metrics.jsonl'), `${lines.join('\n')}\n{"step": 7, "outcome/mean": 0.7, "actor/pol`);
  writeFileSync(path.join(dir, 'eval.jsonl'), `${JSON.stringify({ step: 6, 'val/avg@16': 0.9, 'val/extra@1': 0.33 })}\n`);
  writeFileSync(path.join(dir, 'rollouts.jsonl'), ROLLOUTS.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return dir;
}
