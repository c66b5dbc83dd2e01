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

/** Six steps: two worker groups, two agents, validation every second step, a NaN loss, and timing. */
type MetricLine = { step: number } & Record<string, number>;

export function metricLines(): MetricLine[] {
  const lines: MetricLine[] = [];
  for (let step = 1; step <= 6; step++) {
    const line: MetricLine = {
      step,
      'outcome/mean': 0.1 * step,
      'outcome/std': 0.05 + 0.01 * step,
      'reward/mean': step === 4 ? 0.9 : 0.1 * step - 0.05,
      'episode/count': 32,
      'episode/turns_mean': 2.25,
      'agent/solver/valid_fraction': 0.8 + 0.02 * step,
      'agent/solver/response_length_mean': 30 + step,
      'agent/solver/turns': 40,
      'agent/verifier/reward_mean': 0.1 * step,
      'actor/policy/grad_norm': 10 / step,
      'actor/judge/grad_norm': 0.01 * step,
      'actor/policy/pg_loss': -0.01 * step,
      'actor/judge/pg_loss': 0.02 * step,
      'actor/policy/entropy': 2 - 0.1 * step,
      'actor/policy/micro_batches': 4,
      'advantage/std': 0.3,
      'timing/rollout': 1.5,
      'timing/update': 0.5 + 0.1 * step,
      'timing/step': 2.2 + 0.1 * step,
      'perf/tokens_per_second': 100 * step,
      'perf/cpu_memory_used_gb': 1.5,
      'perf/max_cpu_memory_used_gb': 1.5 + 0.1 * step,
      'perf/heap_used_gb': 0.2,
    };
    if (step % 2 === 0) {
      line['val/avg@16'] = 0.2 + 0.05 * step;
      line['val/pass@16'] = 0.5 + 0.05 * step;
      line['val/tasks'] = 64;
      line['val/gsm8k/avg@16'] = 0.1 * step;
      line['val/math/avg@16'] = 0.05 * step;
      line['val/agent/solver/turns'] = 1000 + step;
      line['val/agent/solver/valid_fraction'] = 0.9;
    }
    lines.push(line);
  }
  return lines;
}

/** The text a prompt may hold that must stay text: a closing script tag, markup, an entity, a quote. */
export const NASTY_TEXT = 'What is 2<3 && 4>1? </script><script>alert("x")</script> <b>bold</b> &amp; \'q\'';

/** rollouts.jsonl rows as the trainer's RolloutLog writes them: two steps, three episodes, five turns. */
export const ROLLOUTS = [
  {
    step: 5,
    trajectoryId: 's5-t0',
    taskId: 'a-1',
    dataSource: 'math',
    agent: 'solver',
    index: 0,
    prompt: 'old step',
    response: 'old',
    reward: 0,
    advantage: 0,
    outcome: 0,
    valid: true,
  },
  {
    step: 6,
    trajectoryId: 's6-t0',
    taskId: 'a-2',
    dataSource: 'math',
    agent: 'solver',
    index: 0,
    envStep: 0,
    prompt: NASTY_TEXT,
    response: 'The answer is \\boxed{4}',
    action: { tag: 'boxed', content: '4' },
    valid: true,
    finishReason: 'stop',
    reward: 1,
    advantage: 0.5,
    outcome: 1,
    responseTokens: 12,
    promptIds: Array.from({ length: 40 }, (_, i) => i),
  },
  {
    step: 6,
    trajectoryId: 's6-t0',
    taskId: 'a-2',
    dataSource: 'math',
    agent: 'verifier',
    index: 1,
    prompt: 'check',
    response: 'looks </script><b>right</b>',
    valid: false,
    invalidReason: 'no verdict',
    reward: -0.1,
    advantage: -0.4,
    outcome: 1,
    responseTokens: 9,
  },
  {
    step: 6,
    trajectoryId: 's6-t1',
    taskId: 'a-2',
    dataSource: 'math',
    agent: 'solver',
    index: 0,
    prompt: 'p',
    response: 'r',
    valid: true,
    reward: 0,
    advantage: -0.5,
    outcome: 0,
    responseTokens: 3,
  },
  {
    step: 6,
    trajectoryId: 's6-t1',
    taskId: 'a-2',
    dataSource: 'math',
    agent: 'verifier',
    index: 1,
    prompt: 'p2',
    response: 'r2',
    valid: true,
    reward: 0,
    advantage: 0,
    outcome: 0,
    responseTokens: 4,
  },
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
