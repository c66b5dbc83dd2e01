// Prints, per training step of a reflective-code run, what UnityMAS-O reports for this workflow: verifier turns per
// episode, the pass rate and the all-passed share at the first and at the last verification, and each agent's share
// of turns in its format. Reads the run's traces.jsonl.
//
//   node examples/workflows/reflective-code/trace-stats.mjs runs/<run>/traces.jsonl
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node trace-stats.mjs <run dir>/traces.jsonl');
  process.exit(1);
}
const traces = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line));

const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);
const steps = [...new Set(traces.map((t) => t.step))].sort((a, b) => a - b);
for (const step of steps) {
  const episodes = traces.filter((t) => t.step === step && t.status === 'completed');
  const verifications = episodes.map((t) => t.executions.filter((e) => e.node === 'verify').map((e) => e.stateAfter));
  const measured = verifications.filter((v) => v.length > 0);
  const valid = new Map();
  for (const e of episodes.flatMap((t) => t.executions).filter((e) => e.kind === 'agent')) {
    valid.set(e.agent, [...(valid.get(e.agent) ?? []), e.parsed?.valid ? 1 : 0]);
  }
  const format = [...valid].map(([agent, flags]) => `${agent} ${mean(flags).toFixed(2)}`).join(', ');
  console.log(
    `step ${step}: ${episodes.length} episodes (${traces.filter((t) => t.step === step).length - episodes.length} failed); ` +
      `verifier turns ${mean(verifications.map((v) => v.length)).toFixed(2)}; ` +
      `pass rate first ${mean(measured.map((v) => v[0].pass_rate)).toFixed(3)}, last ${mean(measured.map((v) => v.at(-1).pass_rate)).toFixed(3)}; ` +
      `all passed first ${mean(measured.map((v) => (v[0].all_passed ? 1 : 0))).toFixed(3)}, last ${mean(measured.map((v) => (v.at(-1).all_passed ? 1 : 0))).toFixed(3)}; ` +
      `in format: ${format}`,
  );
}
