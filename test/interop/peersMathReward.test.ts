import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeInterop } from '../support/interopSuite.js';
import { REPO_ROOT } from '../support/tempProject.js';

// The peer benchmark's TRL reward (bench/peers/math_reward.py) against drmas's own verdicts, computed by the built
// @drmas/plugin-env-math and @drmas/plugin-orchestra (bench/peers/drmasVerdicts.mjs, plain node: dist, not sources),
// on real outputs of the math preset's base model (bench/peers/fixtures, `drmas collect` at temperature 1) and on
// near-misses written to sit on each rule's edge.

interface Case {
  response: string;
  answer: string;
  split: 'train' | 'test';
}

const built = existsSync(join(REPO_ROOT, 'plugins', 'env-math', 'dist', 'index.js'));

const real: Case[] = readFileSync(join(REPO_ROOT, 'bench', 'peers', 'fixtures', 'tiny-solver-responses.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Case);

/** Answers and solutions that differ from a right one by one rule's worth: each rule's both sides. */
function nearMisses(answer: string, question: string): string[] {
  const n = Number(answer);
  const steps = question
    .replace(/^What is /, '')
    .replace(/\?$/, '')
    .replace(/ /g, '');
  return [
    `\\boxed{${answer}}`,
    `\\boxed{${n + 1}}`,
    `\\boxed{${answer}.0}`,
    `\\boxed{${answer}.}`,
    `\\boxed{${answer}.5}`,
    `\\boxed{\\frac{${2 * n}}{2}}`,
    `\\boxed{\\dfrac{${3 * n}}{3}}`,
    `\\boxed{${2 * n}/2}`,
    `\\boxed ${answer}`,
    `\\boxed${answer}`,
    `\\boxed{${answer}`,
    `\\fbox{${answer}}`,
    `\\boxed{ ${answer} }`,
    `\\boxed{$${answer}$}`,
    `\\boxed{${answer}\\%}`,
    `\\boxed{x=${answer}}`,
    `\\boxed{\\text{${answer}}}`,
    `\\boxed{${answer}\\text{ apples}}`,
    `\\boxed{${answer}^\\circ}`,
    `\\boxed{-${answer}}`,
    `\\boxed{+${answer}}`,
    `\\boxed{${answer},000}`,
    `\\boxed{(${answer})}`,
    `\\boxed{${answer}, ${answer}}`,
    `\\boxed{{${answer}}}`,
    `\\boxed{}`,
    `\\boxed{ }`,
    `\\boxedx{${answer}}`,
    `\\boxed{${steps}}`,
    `\\boxed{${n - 1}+1}`,
    `\\boxed{2\\cdot ${n / 2}}`,
    `\\boxed{${n}\\times 1}`,
    `\\boxed{\\sqrt{${n * n}}}`,
    `\\boxed{\\sqrt[3]{${n * n * n}}}`,
    `\\boxed{${n}e0}`,
    `\\boxed{${n / 100}e2}`,
    `\\boxed{${n}x/x}`,
    `\\boxed{0x${n.toString(16)}}`,
    `\\boxed{0b${n.toString(2)}}`,
    `\\boxed{\\pi}`,
    `\\boxed{${n}\\pi/\\pi}`,
    `\\boxed{|${n}|}`,
    `\\boxed{${answer}}\\boxed{${n + 2}}`,
    `\\boxed{${n + 2}} so \\boxed{${answer}}`,
    `<think>\\boxed{${n + 3}}</think>\\boxed{${answer}}`,
    `<think>\\boxed{${answer}}</think>`,
    `<think>\\boxed{${answer}}`,
    `\\boxed{${answer}}</think>`,
    `<THINK>x</THINK>\\boxed{${answer}}`,
    `<think>a</think><think>b</think>\\boxed{${answer}}`,
    `答案 \\boxed{${answer}}`,
    `${steps}=${answer}. \\boxed{${answer}}`,
    `${steps}=${n + 1}. \\boxed{${answer}}`,
    `${steps} = ${answer}, 2+2=5. \\boxed{${answer}}`,
    `1/2+1/3=5/6. 2*(-1)=-2. \\boxed{${answer}}`,
    `0.5+1=2. x+1=3. \\boxed{${answer}}`,
    `3+4=7.5 \\boxed{${answer}}`,
    `12-5=7. 7+8=15. 15*2=30 \\boxed{${answer}}`,
    `\\boxed{\\left(${answer}\\right)}`,
    `\\boxed{\\{${answer}\\}}`,
    `\\boxed{${answer}\u00a0}`,
    `\\boxed{${answer}\ufeff}`,
    `\\boxed{\u0661\u0662}`,
    `\\boxed{${answer}} \\fbox{${n + 4}}`,
  ];
}

/** A verdict line, its numbers as numbers (Python prints 1.0 where JavaScript prints 1). */
const verdict = (line: string) => JSON.parse(line) as Record<string, unknown>;

function casesOf(): Case[] {
  const cases: Case[] = [...real];
  const tasks = new Map(real.map((c) => [(c as Case & { question: string }).question, c]));
  for (const [question, task] of tasks) {
    for (const response of nearMisses(task.answer, question)) cases.push({ response, answer: task.answer, split: task.split });
  }
  // Held-out scoring ignores the worked steps.
  for (const c of real.slice(0, 200)) cases.push({ ...c, split: 'test' });
  return cases;
}

// math_reward.py needs only Python's standard library: the peers environment's Python runs it, so CI need not make
// the trl environment (TRL, torch and CUDA's libraries) to check it.
describeInterop(
  'the peer benchmark TRL reward agrees with drmas',
  'peers',
  (pythonBin) => {
    it('gives every response the verdict and reward drmas gives', () => {
      const cases = casesOf();
      const dir = mkdtempSync(join(tmpdir(), 'drmas-peers-reward-'));
      try {
        const file = join(dir, 'cases.jsonl');
        writeFileSync(file, cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
        const run = (command: string, args: string[]) => {
          const child = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 1 << 28 });
          if (child.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${child.stderr}`);
          return child.stdout.trim().split('\n');
        };
        const drmas = run(process.execPath, ['bench/peers/drmasVerdicts.mjs', file]);
        const python = run(pythonBin, ['bench/peers/math_reward.py', 'verdicts', file]);
        expect(python).toHaveLength(cases.length);
        expect(drmas).toHaveLength(cases.length);
        const disagreements = cases
          .map((c, i) => ({ response: c.response, answer: c.answer, drmas: verdict(drmas[i]!), python: verdict(python[i]!) }))
          .filter((d) => JSON.stringify(d.drmas) !== JSON.stringify(d.python));
        expect(disagreements.slice(0, 5)).toEqual([]);
        // The corpus holds both sides of each rule: right and wrong answers, valid and invalid turns, false steps.
        const verdicts = drmas.map((line) => JSON.parse(line) as { correct: boolean; valid: boolean; falseClaims: number; reason: string });
        expect(cases.length).toBeGreaterThan(3000);
        expect(verdicts.filter((v) => v.correct).length).toBeGreaterThan(200);
        expect(verdicts.filter((v) => !v.valid).length).toBeGreaterThan(200);
        expect(verdicts.filter((v) => v.falseClaims > 0).length).toBeGreaterThan(200);
        expect(new Set(verdicts.map((v) => v.reason))).toEqual(new Set(['correct', 'wrong', 'no_boxed', 'truncated']));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  },
  () => (built ? undefined : 'the packages are not built: run npx tsc -b'),
);
