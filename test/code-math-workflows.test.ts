import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from './support/cliRunner.js';
import { describeSlow } from './support/describeSlow.js';
import { TempProject } from './support/tempProject.js';

/**
 * Each config of examples/workflows/reflective-code and examples/workflows/math-four-agent (shared, separate and
 * partly shared models) trains one step of the tiny base checkpoints on the async executor, from the command line:
 * two prompts, two samples, no evaluation. The math shared config runs in the default suite (onnx, ~3 s); the others,
 * on tfjs or with three and four models, with the slow tests.
 */
const SMALL = [
  'trainer.steps=1',
  'trainer.seed=1',
  'rollout.promptsPerStep=2',
  'rollout.samplesPerPrompt=2',
  'eval.atStart=false',
  'eval.atEnd=false',
  'report.html=false',
  'report.progress=off',
];

interface Example {
  config: string;
  /** Each model of the config, with the agents it serves. */
  models: Record<string, string[]>;
}

const CODE_ROLES = ['planner', 'coder', 'reflector'];
const MATH_ROLES = ['solver', 'verifier', 'refiner', 'finalizer'];
const MATH_SHARED: Example = { config: 'math-four-agent/shared.config.json', models: { policy: MATH_ROLES } };
const SLOW: Example[] = [
  { config: 'math-four-agent/separate.config.json', models: Object.fromEntries(MATH_ROLES.map((role) => [role, [role]])) },
  {
    config: 'math-four-agent/partly-shared.config.json',
    models: { writer: ['solver', 'refiner', 'finalizer'], verifier: ['verifier'] },
  },
  { config: 'reflective-code/shared.config.json', models: { policy: CODE_ROLES } },
  { config: 'reflective-code/separate.config.json', models: Object.fromEntries(CODE_ROLES.map((role) => [role, [role]])) },
  { config: 'reflective-code/partly-shared.config.json', models: { reasoner: ['planner', 'reflector'], coder: ['coder'] } },
];

const scratch = new TempProject('code-math-workflows');
afterAll(() => scratch.dispose());

const jsonLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

interface TraceLine {
  status: string;
  executions: Array<{ node: string; kind: string; agent?: string; modelId?: string; output?: unknown }>;
}

async function trainsOneStep(example: Example): Promise<void> {
  const runDir = scratch.path(example.config.replace(/[/.]/g, '-'));
  const config = path.join('examples', 'workflows', example.config);
  const result = await runCli(['train', '--config', config, '--run-dir', runDir, ...SMALL.flatMap((s) => ['--set', s])]);
  expect({ code: result.code, stderr: result.stderr.includes('error') ? result.stderr : '' }).toEqual({ code: 0, stderr: '' });
  const [line] = jsonLines(path.join(runDir, 'metrics.jsonl')) as Array<Record<string, number>>;
  const traces = jsonLines(path.join(runDir, 'traces.jsonl')) as unknown as TraceLine[];
  expect(traces).toHaveLength(4);
  // Each agent sampled from the model the config maps it to; the agents on every path of the graph ran.
  const ran = new Map<string, string>();
  for (const trace of traces) {
    expect(trace.status).toBe('completed');
    for (const e of trace.executions.filter((x) => x.kind === 'agent')) {
      expect(example.models[e.modelId!]).toContain(e.agent);
      ran.set(e.agent!, e.modelId!);
    }
  }
  const everyPath = example.config.startsWith('reflective-code') ? ['planner', 'coder'] : ['solver', 'verifier', 'finalizer'];
  expect([...ran.keys()]).toEqual(expect.arrayContaining(everyPath));
  // Every model that sampled a turn took its optimizer step on a finite gradient (a Refiner no episode reached has none).
  for (const model of new Set(ran.values())) expect(Number.isFinite(line![`actor/${model}/grad_norm`])).toBe(true);
  if (example.config.startsWith('reflective-code')) {
    // The verifier tool ran after every code turn, and the episode's outcome is the share of tests the last code passed.
    for (const trace of traces) {
      const nodes = trace.executions.map((e) => e.node);
      expect(nodes.filter((n) => n === 'code').length).toBe(nodes.filter((n) => n === 'verify').length);
      expect(nodes.filter((n) => n === 'code').length).toBeLessThanOrEqual(3);
    }
    expect(line!['outcome/mean']).toBeCloseTo(line!['env/tests_passed']!, 12);
  }
}

describe('code and math workflow configs train one step from the command line', () => {
  test(MATH_SHARED.config, () => trainsOneStep(MATH_SHARED), 60_000);
});

describeSlow('code and math workflow configs train one step from the command line (slow)', () => {
  for (const example of SLOW) test(example.config, () => trainsOneStep(example), 180_000);
});
