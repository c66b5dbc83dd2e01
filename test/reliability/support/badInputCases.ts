import { hostname } from 'node:os';
import { RUN_LOCK_FILE } from '@drmas/core';

/**
 * Bad configs and CLI misuses, as a careless user or an attacker would write them, for `badInput.test.ts`. Each case
 * runs in a folder of its own holding `files`; `where` is what the message must name before the key (a file of the
 * case, written relative to its folder, or the `--set`/option text), `key` the key or option it must name.
 */
export interface BadInputCase {
  name: string;
  /** The CLI arguments, the command first. */
  args: string[];
  /** Files of the case's folder: path -> text, or an object written as JSON. */
  files?: Record<string, string | object>;
  /** Symbolic links of the case's folder: path -> target. */
  links?: Record<string, string>;
  /** The error code the first line must carry. */
  code: string;
  /** The file (relative to the case's folder) or `--set ...` text the message must name; omitted: none required. */
  where?: string;
  /** The config key or option the message must name. */
  key?: string;
  /** More the message must say (the number at fault, the suggestion). */
  says?: RegExp;
  /** Run as a user would, in a child process: the real exit code, and no hang where one was seen. */
  spawn?: boolean;
}

const MATH = { presets: ['math'], trainer: { steps: 1 }, eval: { atEnd: false } };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function merge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) out[key] = isObject(value) && isObject(out[key]) ? merge(out[key], value) : value;
  return out;
}

/** The math preset for one step with `extra` merged in, as `cfg.json`. */
function math(extra: Record<string, unknown> = {}): Record<string, object> {
  return { 'cfg.json': merge(MATH, extra) };
}

/** A train case on `cfg.json` holding the math preset with `extra`. */
function config(name: string, extra: Record<string, unknown>, code: string, key: string, says?: RegExp): BadInputCase {
  return { name, args: ['train', '--config', 'cfg.json'], files: math(extra), code, where: 'cfg.json', key, says };
}

/** A train case with one `--set` over the plain math preset. */
function set(name: string, text: string, code: string, key: string, says?: RegExp): BadInputCase {
  return { name, args: ['train', '--config', 'cfg.json', '--set', text], files: math(), code, where: `--set ${text}`, key, says };
}

/** A plugin with a rollout tap (so a run gets past its start) that throws from `hook` at step 1. */
function throwingPlugin(hook: string, throwing: string): string {
  return `import { DrmasError, Stage } from '@drmas/core';
export default {
  name: 'thrower',
  apply(kernel) {
    kernel.hooks.rollout.tapPromise('thrower', async () => ({ trajectories: [], metrics: {} }));
    kernel.hooks.${hook}(${hook.startsWith('setup') ? "{ name: 'thrower', stage: Stage.DEFAULT }" : "'thrower'"}, ${throwing});
  },
};
`;
}

const DPO_DATA = {
  'pairs.jsonl': '{"agent": "solver", "prompt": "Solve: 1+1\\n", "chosen": "\\\\boxed{2}", "rejected": "\\\\boxed{3}"}\n',
};
/** A run folder `runs/busy` whose lock names this test's own process: alive for as long as the case runs. */
const busyRunDir = (command: string) => ({
  [`runs/busy/${RUN_LOCK_FILE}`]: { pid: process.pid, host: hostname(), startedAt: 'then', command, id: 'busy' },
});

const SFT_DATA = { 'demos.jsonl': '{"agent": "solver", "prompt": "Solve: 1+1\\n", "response": "\\\\boxed{2}"}\n' };

export const BAD_INPUT_CASES: BadInputCase[] = [
  // The config file: missing, unreadable, malformed, empty.
  { name: 'a --config file that does not exist', args: ['train', '--config', 'nope.json'], code: 'CONFIG_NOT_FOUND', where: 'nope.json' },
  {
    name: '--config naming a folder',
    args: ['train', '--config', 'folder'],
    files: { 'folder/x.txt': '' },
    code: 'CONFIG_NOT_FOUND',
    where: 'folder',
  },
  { name: 'no config anywhere for train', args: ['train'], code: 'CONFIG_NOT_FOUND' },
  {
    name: 'a dangling symlink as --config',
    args: ['train', '--config', 'link.json'],
    links: { 'link.json': 'gone.json' },
    code: 'CONFIG_NOT_FOUND',
    where: 'link.json',
  },
  {
    name: 'JSON with a trailing comma',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': '{ "presets": ["math"], }' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'cfg.json',
    says: /line 1, column/,
  },
  {
    name: 'JSON cut short',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': '{ "presets": ["math"],\n  "trainer": {' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'cfg.json',
  },
  {
    name: 'a JSON array as the config',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': '["math"]' },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    says: /an array/,
  },
  {
    name: 'a JSON string as the config',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': '"math"' },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
  },
  {
    name: 'YAML with a tab indent',
    args: ['train', '--config', 'cfg.yaml'],
    files: { 'cfg.yaml': 'presets:\n\t- math\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'cfg.yaml',
    says: /line 2/,
  },
  {
    name: 'YAML with an unclosed list',
    args: ['train', '--config', 'cfg.yml'],
    files: { 'cfg.yml': 'presets: [math\ntrainer: {steps: 1}\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'cfg.yml',
  },
  {
    name: 'a YAML scalar as the config',
    args: ['train', '--config', 'cfg.yaml'],
    files: { 'cfg.yaml': 'math\n' },
    code: 'CONFIG_INVALID',
    where: 'cfg.yaml',
  },
  {
    name: '.drmasrc that is not YAML',
    args: ['train'],
    files: { '.drmasrc': 'presets: [math\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: '.drmasrc',
  },
  {
    name: 'package.json#drmas that is a number',
    args: ['train'],
    files: { 'package.json': { name: 'p', drmas: 5 } },
    code: 'CONFIG_INVALID',
    where: 'package.json',
  },
  {
    name: 'a TS config with a syntax error',
    args: ['train', '--config', 'drmas.config.ts'],
    files: { 'drmas.config.ts': 'export default {\n  presets: ["math"],\n  trainer: { steps: 1 ,, },\n};\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /line 3, column/,
    spawn: true,
  },
  {
    name: 'a TS config found by search with a syntax error',
    args: ['train'],
    files: { 'drmas.config.ts': 'export default { presets: ["math"] trainer: {} };\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /line 1, column 36/,
  },
  {
    name: 'a TS config that throws at import',
    args: ['train', '--config', 'drmas.config.ts'],
    files: {
      'drmas.config.ts':
        'const steps = 1;\n\nthrow new Error("no config today");\nexport default { presets: ["math"], trainer: { steps } };\n',
    },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /no config today.*drmas\.config\.ts:3:7/,
  },
  {
    name: 'a TS config whose default export is a number',
    args: ['train', '--config', 'drmas.config.ts'],
    files: { 'drmas.config.ts': 'export default 5;\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /a number/,
  },
  {
    name: 'a TS config with no default export',
    args: ['train', '--config', 'drmas.config.ts'],
    files: { 'drmas.config.ts': 'export const config = { presets: ["math"] };\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /no default export \(it exports config\)/,
  },
  {
    name: 'a TS config exporting a function',
    args: ['train', '--config', 'drmas.config.ts'],
    files: { 'drmas.config.ts': 'export default () => ({ presets: ["math"] });\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.ts',
    says: /a function/,
  },
  {
    name: 'a JS config with a syntax error',
    args: ['train', '--config', 'drmas.config.mjs'],
    files: { 'drmas.config.mjs': 'export default {\n  presets: ["math"],\n  trainer: { steps: 1 ,, },\n};\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.mjs',
    says: /line 3, column 24/,
  },
  {
    name: 'a JS config importing a missing package',
    args: ['train', '--config', 'drmas.config.mjs'],
    files: { 'drmas.config.mjs': 'import x from "drmas-no-such-package";\nexport default x;\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.mjs',
    says: /drmas-no-such-package/,
  },
  {
    name: 'a CommonJS config that throws',
    args: ['train', '--config', 'drmas.config.cjs'],
    files: { 'drmas.config.cjs': 'module.exports = JSON.parse("{");\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.cjs',
  },
  {
    name: 'a JS config exporting null',
    args: ['train', '--config', 'drmas.config.mjs'],
    files: { 'drmas.config.mjs': 'export default null;\n' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'drmas.config.mjs',
    says: /null/,
  },
  {
    name: 'an empty JSON file',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': '' },
    code: 'NO_ROLLOUT',
    where: 'cfg.json',
    key: 'presets',
    says: /produces rollouts/,
    spawn: true,
  },
  {
    name: 'an empty drmas.config.json found by search',
    args: ['train'],
    files: { 'drmas.config.json': '' },
    code: 'NO_ROLLOUT',
    where: 'drmas.config.json',
    key: 'presets',
  },
  {
    name: '{} with no preset',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': {} },
    code: 'NO_ROLLOUT',
    where: 'cfg.json',
    key: 'presets',
  },
  {
    name: 'export default {} in TS',
    args: ['train', '--config', 'drmas.config.ts'],
    files: { 'drmas.config.ts': 'export default {};\n' },
    code: 'NO_ROLLOUT',
    where: 'drmas.config.ts',
    key: 'presets',
  },
  {
    name: 'an empty YAML file',
    args: ['train', '--config', 'cfg.yaml'],
    files: { 'cfg.yaml': '# nothing yet\n' },
    code: 'NO_ROLLOUT',
    where: 'cfg.yaml',
    key: 'presets',
  },
  {
    name: 'only a trainer section',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': { trainer: { steps: 3 } } },
    code: 'NO_ROLLOUT',
    where: 'cfg.json',
    key: 'presets',
  },

  // Presets and plugins.
  config('a misspelt preset', { presets: ['mth'] }, 'PRESET_NOT_FOUND', 'presets[0]', /mth/),
  config('presets as a string', { presets: 'math' }, 'CONFIG_INVALID', 'presets'),
  config('a number in plugins', { plugins: [42] }, 'CONFIG_INVALID', 'plugins[0]'),
  config('a plugin that is not installed', { plugins: ['drmas-no-such-plugin'] }, 'PLUGIN_NOT_FOUND', 'plugins[0]'),
  config('a plugin path that does not exist', { plugins: ['./missing.js'] }, 'PLUGIN_NOT_FOUND', 'plugins[0]'),
  {
    name: 'a plugin module with no default export',
    args: ['train', '--config', 'cfg.json'],
    files: { ...math({ plugins: ['./p.js'] }), 'p.js': 'export const x = 1;\n' },
    code: 'PLUGIN_INVALID',
    where: 'cfg.json',
    key: 'plugins[0]',
  },
  {
    name: 'a plugin with a syntax error',
    args: ['train', '--config', 'cfg.json'],
    files: { ...math({ plugins: ['./p.mjs'] }), 'p.mjs': 'export default { name: "p", apply() { ,, } };\n' },
    code: 'PLUGIN_LOAD_FAILED',
    key: 'plugins[0]',
    says: /line 1/,
  },
  {
    name: 'a plugin whose register throws',
    args: ['train', '--config', 'cfg.json'],
    files: {
      ...math({ plugins: ['./p.js'] }),
      'p.js': 'export default { name: "p", register() { throw new TypeError("cannot register"); }, apply() {} };\n',
    },
    code: 'PLUGIN_FAILED',
    where: 'cfg.json',
    key: 'plugins[0]',
    says: /plugin "p" threw in register\(\): cannot register/,
  },
  {
    name: 'a plugin whose apply throws',
    args: ['info', '--config', 'cfg.json'],
    files: { ...math({ plugins: ['./p.js'] }), 'p.js': 'export default { name: "p", apply() { null.x; } };\n' },
    code: 'PLUGIN_FAILED',
    where: 'cfg.json',
    key: 'plugins[0]',
  },
  {
    name: 'a plugin whose beforeStep tap throws a TypeError',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': { plugins: ['./thrower.js'] }, 'thrower.js': throwingPlugin('beforeStep.tap', '(step) => step.nothing.here') },
    code: 'PLUGIN_FAILED',
    where: 'cfg.json',
    key: 'plugins[0]',
    says: /plugin thrower failed in hook beforeStep at step 1: TypeError: /,
    spawn: true,
  },
  {
    name: 'a plugin whose setup tap throws a string',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': { plugins: ['./thrower.js'] }, 'thrower.js': throwingPlugin('setup.tap', '() => { throw "no GPU"; }') },
    code: 'PLUGIN_FAILED',
    where: 'cfg.json',
    key: 'plugins[0]',
    says: /plugin thrower failed in hook setup: no GPU/,
  },
  {
    name: 'a plugin whose validate tap throws a DrmasError',
    args: ['train', '--config', 'cfg.json'],
    files: {
      'cfg.json': { plugins: ['./thrower.js'] },
      'thrower.js': throwingPlugin(
        'validate.tap',
        '() => { throw new DrmasError("CONFIG_INVALID", "thrower.level must be set", { key: "trainer.steps", hint: "set it" }); }',
      ),
    },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'trainer.steps',
    says: /: thrower\.level must be set\n/,
  },
  {
    name: 'a plugin whose afterStep tap rejects',
    args: ['train', '--config', 'cfg.json'],
    files: {
      'cfg.json': { plugins: ['./thrower.js'], trainer: { steps: 2 } },
      'thrower.js': throwingPlugin('afterStep.tapPromise', 'async () => { throw new RangeError("bad metric"); }'),
    },
    code: 'PLUGIN_FAILED',
    says: /plugin thrower failed in hook afterStep at step 1: RangeError: bad metric/,
  },
  {
    name: "a plugin's evaluate tap that throws, in drmas eval",
    args: ['eval', '--config', 'cfg.json'],
    files: {
      'cfg.json': { plugins: ['./thrower.js'] },
      'thrower.js': throwingPlugin('evaluate.tap', '() => { throw new Error("no tasks"); }'),
    },
    code: 'PLUGIN_FAILED',
    says: /plugin thrower failed in hook evaluate at step 0: no tasks/,
  },

  // Unknown keys, at every depth.
  config('a misspelt section', { trainr: { steps: 2 } }, 'CONFIG_INVALID', 'trainr', /Did you mean "trainer"/),
  config('trainer.stepz', { trainer: { stepz: 2 } }, 'CONFIG_INVALID', 'trainer.stepz', /Did you mean "steps"/),
  config('rollout.samplesPerPromt', { rollout: { samplesPerPromt: 2 } }, 'CONFIG_INVALID', 'rollout.samplesPerPromt', /samplesPerPrompt/),
  config('agents.solver.samplng', { agents: { solver: { samplng: {} } } }, 'CONFIG_INVALID', 'agents.solver.samplng', /sampling/),
  config(
    'agents.solver.sampling.maxNewToken',
    { agents: { solver: { sampling: { maxNewToken: 9 } } } },
    'CONFIG_INVALID',
    'agents.solver.sampling.maxNewToken',
    /maxNewTokens/,
  ),
  config('agents.solver.train.lrr', { agents: { solver: { train: { lrr: 1 } } } }, 'CONFIG_INVALID', 'agents.solver.train.lrr'),
  config('models.policy.optimiser', { models: { policy: { optimiser: {} } } }, 'CONFIG_INVALID', 'models.policy.optimiser', /optimizer/),
  config(
    'a param group key',
    { models: { policy: { optimizer: { paramGroups: [{ params: ['x'], lrate: 1 }] } } } },
    'CONFIG_INVALID',
    'models.policy.optimizer.paramGroups[0].lrate',
  ),
  config(
    'algorithm.loss.clipRatoi',
    { algorithm: { loss: { clipRatoi: 0.2 } } },
    'CONFIG_INVALID',
    'algorithm.loss.clipRatoi',
    /clipRatio/,
  ),
  config(
    'algorithm.dynamicSampling.enable',
    { algorithm: { dynamicSampling: { enable: true } } },
    'CONFIG_INVALID',
    'algorithm.dynamicSampling.enable',
    /enabled/,
  ),
  config('env.levls', { env: { levls: [1] } }, 'CONFIG_INVALID', 'env.levls', /levels/),
  config('eval.kk', { eval: { kk: 4 } }, 'CONFIG_INVALID', 'eval.kk'),
  config('report.htm', { report: { htm: false } }, 'CONFIG_INVALID', 'report.htm', /html/),
  config('orchestra.maxLoop', { orchestra: { maxLoop: 3 } }, 'CONFIG_INVALID', 'orchestra.maxLoop', /maxLoops/),
  config('reward.allocater', { reward: { allocater: 'drmas' } }, 'CONFIG_INVALID', 'reward.allocater', /allocator/),
  config('a search key in the math env', { env: { topk: 3 } }, 'CONFIG_INVALID', 'env.topk'),
  config(
    'a role typo: agents.solvr',
    { agents: { solvr: { sampling: { temperature: 0.5 } } } },
    'CONFIG_INVALID',
    'agents.solvr',
    /unknown agent role solvr in agents; the orchestra math has solver, verifier\. Did you mean "solver"\?/,
  ),
  config(
    'a role in the wrong case: agents.Verifier',
    { agents: { Verifier: { model: 'policy' } } },
    'CONFIG_INVALID',
    'agents.Verifier',
    /verifier/,
  ),
  {
    name: 'a search retriever key misspelt',
    args: ['train', '--config', 'cfg.json'],
    files: { 'cfg.json': { presets: ['search'], env: { retriever: { url: ['http://x'] } } } },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'env.retriever.url',
    says: /urls/,
  },

  // Bad types and values out of range, in every section.
  config('trainer.steps as text', { trainer: { steps: 'two' } }, 'CONFIG_INVALID', 'trainer.steps'),
  config('negative trainer.steps', { trainer: { steps: -1 } }, 'CONFIG_INVALID', 'trainer.steps'),
  config('fractional trainer.steps', { trainer: { steps: 1.5 } }, 'CONFIG_INVALID', 'trainer.steps'),
  config('trainer.steps 1e12', { trainer: { steps: 1e12 } }, 'CONFIG_INVALID', 'trainer.steps', /10000000/),
  config('trainer.keepLast 0', { trainer: { keepLast: 0 } }, 'CONFIG_INVALID', 'trainer.keepLast'),
  config('negative trainer.saveEvery', { trainer: { saveEvery: -3 } }, 'CONFIG_INVALID', 'trainer.saveEvery'),
  config('an empty trainer.outputDir', { trainer: { outputDir: '' } }, 'CONFIG_INVALID', 'trainer.outputDir'),
  config('trainer.memoryBudget as words', { trainer: { memoryBudget: 'lots' } }, 'CONFIG_INVALID', 'trainer.memoryBudget', /8GiB/),
  config('trainer.logRollouts 1e12', { trainer: { logRollouts: 1e12 } }, 'CONFIG_INVALID', 'trainer.logRollouts'),
  config('trainer.oldLogProbs misspelt', { trainer: { oldLogProbs: 'recompte' } }, 'CONFIG_INVALID', 'trainer.oldLogProbs', /recompute/),
  config('rollout.promptsPerStep 1e9', { rollout: { promptsPerStep: 1e9 } }, 'CONFIG_INVALID', 'rollout.promptsPerStep', /65536/),
  {
    ...config('rollout.samplesPerPrompt 1e7', { rollout: { samplesPerPrompt: 1e7 } }, 'CONFIG_INVALID', 'rollout.samplesPerPrompt', /4096/),
    spawn: true,
  },
  config('rollout.samplesPerPrompt 0', { rollout: { samplesPerPrompt: 0 } }, 'CONFIG_INVALID', 'rollout.samplesPerPrompt'),
  // The budget cases train on the default engine (auto: onnx here), whose estimate counts the activations its
  // training pass keeps (onnx has no heap cap; tfjs on wasm caps the budget at 4 GiB instead).
  config(
    'rollout.samplesPerPrompt 4096 past the memory budget',
    { rollout: { samplesPerPrompt: 4096 } },
    'LIMIT_EXCEEDED',
    'rollout.samplesPerPrompt',
    /32,768 rows \(rollout\.promptsPerStep 8 x rollout\.samplesPerPrompt 4,096\) x 256 tokens \(a round's longest row: orchestra\.maxLoops 2 x \(agents\.solver\.sampling\.maxNewTokens 56 \+ agents\.verifier\.sampling\.maxNewTokens 72\), each turn's prompt carrying the round's earlier outputs\) x 62,464 bytes per token \(4,096 of model policy's key\/value cache \+ 58,368 of model policy's activations kept for the backward pass on onnx\) .* = 489 GiB > /,
  ),
  config(
    'rollout.promptsPerStep 65536 past the memory budget',
    { rollout: { promptsPerStep: 65536 } },
    'LIMIT_EXCEEDED',
    'rollout.promptsPerStep',
    /262,144 rows/,
  ),
  config(
    'a memory budget too small for the preset',
    { trainer: { memoryBudget: '1MiB' } },
    'LIMIT_EXCEEDED',
    'rollout.promptsPerStep',
    // 32 rows x 256 tokens (a round's last call: 2 loops x (56 + 72) tokens of responses) x 62,464 bytes =
    // 511,705,088, + 32 rows x 4 turns x 72 tokens x 64 bytes of records = 589,824, + tiny's training state 5 x
    // 12,845,056 and what a run holds besides (12,845,056 + 3 x 512 x 256 x 4 + 300 MiB): 393,216,000;
    // 905,510,912 bytes = 863.6 MiB.
    /= 864 MiB > 1 MiB \(trainer\.memoryBudget 1MiB\)/,
  ),
  config('eval.k 1e9', { eval: { k: 1e9 } }, 'CONFIG_INVALID', 'eval.k'),
  config(
    'eval.k 4096 past the memory budget',
    { eval: { k: 4096 } },
    'LIMIT_EXCEEDED',
    'eval.k',
    /65,536 rows \(eval\.tasksPerBatch 16 x eval\.k 4,096\)/,
  ),
  config('negative eval.tasks', { eval: { tasks: -1 } }, 'CONFIG_INVALID', 'eval.tasks'),
  config(
    'eval.tasks beyond the held-out split',
    { eval: { tasks: 1000, atEnd: true } },
    'LIMIT_EXCEEDED',
    'eval.tasks',
    /eval\.tasks is 1,000, but the held-out split of environment math has 64 tasks/,
  ),
  config(
    'maxNewTokens 100000 beyond the positions',
    { agents: { solver: { sampling: { maxNewTokens: 100000 } } } },
    'LIMIT_EXCEEDED',
    'agents.solver.sampling.maxNewTokens',
    /100,000, but model policy has 2,048 positions/,
  ),
  config(
    'maxNewTokens equal to the positions',
    { agents: { verifier: { sampling: { maxNewTokens: 2048 } } } },
    'LIMIT_EXCEEDED',
    'agents.verifier.sampling.maxNewTokens',
  ),
  config(
    'a prompt template too long for the positions, found at the first rollout',
    { agents: { solver: { prompt: `Solve: {question}\n${'q~'.repeat(1200)}` } } },
    'LIMIT_EXCEEDED',
    'agents.solver.prompt',
    /agent solver's longest prompt has [\d,]+ tokens, which with agents\.solver\.sampling\.maxNewTokens 56 exceeds the 2,048 positions of model policy/,
  ),
  {
    ...config(
      'maxNewTokens 1e7',
      { agents: { solver: { sampling: { maxNewTokens: 1e7 } } } },
      'CONFIG_INVALID',
      'agents.solver.sampling.maxNewTokens',
    ),
    spawn: true,
  },
  config(
    'maxNewTokens 0',
    { agents: { solver: { sampling: { maxNewTokens: 0 } } } },
    'CONFIG_INVALID',
    'agents.solver.sampling.maxNewTokens',
  ),
  config(
    'a negative temperature',
    { agents: { solver: { sampling: { temperature: -1 } } } },
    'CONFIG_INVALID',
    'agents.solver.sampling.temperature',
  ),
  config('topP 1.5', { agents: { verifier: { sampling: { topP: 1.5 } } } }, 'CONFIG_INVALID', 'agents.verifier.sampling.topP'),
  config(
    'microBatchSize 0',
    { agents: { solver: { train: { microBatchSize: 0 } } } },
    'CONFIG_INVALID',
    'agents.solver.train.microBatchSize',
  ),
  config(
    'microBatchSize 1e9',
    { agents: { solver: { train: { microBatchSize: 1e9 } } } },
    'CONFIG_INVALID',
    'agents.solver.train.microBatchSize',
  ),
  config('5000 PPO epochs', { agents: { solver: { train: { epochs: 5000 } } } }, 'CONFIG_INVALID', 'agents.solver.train.epochs'),
  config(
    'agents sharing a model with different lr',
    { agents: { solver: { train: { lr: 1e-4 } }, verifier: { train: { lr: 3e-4 } } } },
    'CONFIG_INVALID',
    'agents.verifier.train.lr',
  ),
  config('an agent on an undefined model', { agents: { solver: { model: 'polcy' } } }, 'CONFIG_INVALID', 'agents.solver.model', /policy/),
  config('a negative learning rate', { models: { policy: { optimizer: { lr: -1 } } } }, 'CONFIG_INVALID', 'models.policy.optimizer.lr'),
  config(
    'a misspelt schedule',
    { models: { policy: { optimizer: { schedule: 'cosin' } } } },
    'CONFIG_INVALID',
    'models.policy.optimizer.schedule',
  ),
  config(
    'warmupSteps 1e12',
    { models: { policy: { optimizer: { warmupSteps: 1e12 } } } },
    'CONFIG_INVALID',
    'models.policy.optimizer.warmupSteps',
  ),
  config('a misspelt estimator', { algorithm: { advantage: 'grpoo' } }, 'UNKNOWN_NAME', 'algorithm.advantage', /grpo/),
  config('clipRatio 2', { algorithm: { loss: { clipRatio: 2 } } }, 'CONFIG_INVALID', 'algorithm.loss.clipRatio'),
  config(
    'dynamicSampling.maxRounds 1e6',
    { algorithm: { dynamicSampling: { maxRounds: 1e6 } } },
    'CONFIG_INVALID',
    'algorithm.dynamicSampling.maxRounds',
  ),
  config('a misspelt orchestra', { orchestra: { name: 'mathh' } }, 'UNKNOWN_NAME', 'orchestra.name', /math/),
  config('orchestra.maxLoops 0', { orchestra: { maxLoops: 0 } }, 'CONFIG_INVALID', 'orchestra.maxLoops'),
  config('orchestra.maxLoops 1e6', { orchestra: { maxLoops: 1e6 } }, 'CONFIG_INVALID', 'orchestra.maxLoops'),
  config('a misspelt environment', { env: { name: 'maths' } }, 'UNKNOWN_NAME', 'env.name', /math/),
  config('env.levels [9]', { env: { levels: [9] } }, 'CONFIG_INVALID', 'env.levels[0]'),
  config('env.testSize 1e9', { env: { testSize: 1e9 } }, 'CONFIG_INVALID', 'env.testSize'),
  config('env.maxRounds 1e6', { env: { maxRounds: 1e6 } }, 'CONFIG_INVALID', 'env.maxRounds'),
  config('env.maxSteps 1e6 (the old name of env.maxRounds)', { env: { maxSteps: 1e6 } }, 'CONFIG_INVALID', 'env.maxRounds'),
  config(
    'env.maxSteps and env.maxRounds both set',
    { env: { maxSteps: 2, maxRounds: 3 } },
    'CONFIG_INVALID',
    'env.maxSteps',
    /env\.maxSteps and env\.maxRounds are both set/,
  ),
  config('a misspelt backend', { models: { policy: { backend: 'tfj' } } }, 'UNKNOWN_NAME', 'models.policy.backend', /tfjs/),
  config('an unknown architecture', { models: { policy: { architecture: 'GPT2' } } }, 'CONFIG_INVALID', 'models.policy.architecture'),
  config('a misspelt allocator', { reward: { allocator: 'per-turn' } }, 'UNKNOWN_NAME', 'reward.allocator', /per_turn/),
  config('report.progress fancy', { report: { progress: 'fancy' } }, 'CONFIG_INVALID', 'report.progress'),

  // Output folders that cannot be written.
  {
    name: '--run-dir that another run is writing',
    args: ['train', '--config', 'cfg.json', '--run-dir', 'runs/busy'],
    files: {
      ...math(),
      'runs/busy/metrics.jsonl': '{"step":1}\n',
      // This test's own process stands for the run that writes there: it is alive for as long as the case runs.
      ...busyRunDir('drmas train'),
    },
    code: 'RUN_DIR_IN_USE',
    where: `runs/busy/${RUN_LOCK_FILE}`,
    key: '--run-dir',
    says: new RegExp(`being written by another drmas run \\(process ${process.pid}, started then: drmas train\\)`),
  },
  {
    name: 'collect --run-dir that another run is writing',
    args: ['collect', '--config', 'cfg.json', '--episodes', '4', '--out', 'demos.jsonl', '--run-dir', 'runs/busy'],
    files: {
      ...math(),
      // Demonstrations an earlier collect wrote: a refused run must not empty them.
      'demos.jsonl': '{"agent": "solver", "prompt": "p", "response": "r", "reward": 1}\n',
      ...busyRunDir('drmas train'),
    },
    code: 'RUN_DIR_IN_USE',
    where: `runs/busy/${RUN_LOCK_FILE}`,
    key: '--run-dir',
    says: /being written by another drmas run/,
  },
  {
    name: 'sft --out that another run is writing',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--out', 'runs/busy'],
    files: {
      ...math(),
      ...SFT_DATA,
      ...busyRunDir('drmas sft'),
    },
    code: 'RUN_DIR_IN_USE',
    where: `runs/busy/${RUN_LOCK_FILE}`,
    key: '--out',
    says: /being written by another drmas run \(process \d+, started then: drmas sft\)/,
  },
  {
    name: 'trainer.outputDir onto a file',
    args: ['train', '--config', 'cfg.json'],
    files: { ...math({ trainer: { outputDir: 'taken' } }), taken: 'a file' },
    code: 'OUTPUT_UNWRITABLE',
    where: 'cfg.json',
    key: 'trainer.outputDir',
    says: /is a file, not a folder/,
  },
  config('trainer.outputDir in /proc', { trainer: { outputDir: '/proc/drmas-runs' } }, 'OUTPUT_UNWRITABLE', 'trainer.outputDir', /\/proc/),
  {
    name: '--run-dir in /proc',
    args: ['train', '--config', 'cfg.json', '--run-dir', '/proc/drmas/run'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--run-dir',
    spawn: true,
  },
  {
    name: '--run-dir /proc itself',
    args: ['train', '--config', 'cfg.json', '--run-dir', '/proc'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--run-dir',
  },
  {
    name: '--run-dir in /sys',
    args: ['train', '--config', 'cfg.json', '--run-dir', '/sys/drmas-run'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--run-dir',
  },
  {
    name: '--run-dir below a file',
    args: ['train', '--config', 'cfg.json', '--run-dir', 'cfg.json/run'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--run-dir',
  },
  {
    name: 'eval --run-dir onto a file',
    args: ['eval', '--config', 'cfg.json', '--run-dir', 'cfg.json'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--run-dir',
  },

  // --set, parsed strictly by the schema's type.
  { ...set('--set an integer in hex', 'trainer.steps=0x10', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps', /whole number/), spawn: true },
  set('--set an integer in exponent form', 'trainer.steps=1e3', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps'),
  set('--set an empty integer', 'trainer.steps=', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps'),
  set('--set an integer after a space', 'trainer.steps= 5', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps'),
  set('--set an integer with trailing letters', 'trainer.steps=5abc', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps'),
  set('--set without a value', 'trainer.steps', 'CONFIG_OVERRIDE_INVALID', 'trainer.steps', /KEY=VALUE/),
  set('--set a key with a space', 'tra iner.steps=1', 'CONFIG_OVERRIDE_INVALID', 'tra iner.steps'),
  set('--set an unknown section', 'nosuch.key=1', 'CONFIG_OVERRIDE_INVALID', 'nosuch.key', /unknown key nosuch/),
  set('--set an unknown key in a section', 'trainer.stepz=3', 'CONFIG_OVERRIDE_INVALID', 'trainer.stepz', /Did you mean "steps"/),
  set('--set a boolean as yes', 'eval.atEnd=yes', 'CONFIG_OVERRIDE_INVALID', 'eval.atEnd', /true or false/),
  set('--set a boolean as 1', 'eval.atStart=1', 'CONFIG_OVERRIDE_INVALID', 'eval.atStart'),
  set('--set NaN', 'models.policy.optimizer.lr=NaN', 'CONFIG_OVERRIDE_INVALID', 'models.policy.optimizer.lr'),
  set('--set Infinity', 'models.policy.optimizer.lr=Infinity', 'CONFIG_OVERRIDE_INVALID', 'models.policy.optimizer.lr'),
  set(
    '--set a misspelt enum value',
    'models.policy.optimizer.schedule=cosin',
    'CONFIG_OVERRIDE_INVALID',
    'models.policy.optimizer.schedule',
    /constant, linear, cosine/,
  ),
  set('--set a list with a bad item', 'env.levels=1,x', 'CONFIG_OVERRIDE_INVALID', 'env.levels'),
  set('--set one item of plugins', 'plugins.0=x', 'CONFIG_OVERRIDE_INVALID', 'plugins.0', /whole list/),
  set('--set a value below the minimum', 'rollout.samplesPerPrompt=-4', 'CONFIG_OVERRIDE_INVALID', 'rollout.samplesPerPrompt'),
  set('--set samplesPerPrompt 1e7 spelt out', 'rollout.samplesPerPrompt=10000000', 'CONFIG_OVERRIDE_INVALID', 'rollout.samplesPerPrompt'),
  set('--set a role typo', 'agents.solvr.model=policy', 'CONFIG_INVALID', 'agents.solvr', /unknown agent role solvr/),
  set(
    '--set maxNewTokens beyond the positions',
    'agents.solver.sampling.maxNewTokens=4096',
    'LIMIT_EXCEEDED',
    'agents.solver.sampling.maxNewTokens',
  ),
  set('--set a misspelt preset list', 'presets=["mth"]', 'PRESET_NOT_FOUND', 'presets[0]'),

  // The command line.
  { name: 'drmas with no command', args: [], code: 'INVALID_ARGUMENT', key: 'command', spawn: true },
  { name: 'a misspelt command', args: ['trian'], code: 'INVALID_ARGUMENT', key: 'trian', says: /unknown command "trian"/, spawn: true },
  {
    name: 'an unknown train option',
    args: ['train', '--config', 'cfg.json', '--stpes', '3'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--stpes',
  },
  { name: '--config without its value', args: ['train', '--config'], code: 'INVALID_ARGUMENT', key: '--config' },
  { name: 'a stray argument to train', args: ['train', 'cfg.json'], files: math(), code: 'INVALID_ARGUMENT', key: 'cfg.json' },
  { name: 'an unknown short option', args: ['info', '-x'], code: 'INVALID_ARGUMENT', key: '-x' },
  { name: 'eval --k in hex', args: ['eval', '--config', 'cfg.json', '--k', '0x10'], files: math(), code: 'INVALID_ARGUMENT', key: '--k' },
  { name: 'eval --k 0', args: ['eval', '--config', 'cfg.json', '--k', '0'], files: math(), code: 'INVALID_ARGUMENT', key: '--k' },
  {
    name: 'eval --k 1e9 spelt out',
    args: ['eval', '--config', 'cfg.json', '--k', '1000000000'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--k',
    says: /--k 1000000000: Too big/,
  },
  {
    name: 'eval --checkpoint that does not exist',
    args: ['eval', '--config', 'cfg.json', '--checkpoint', 'nope'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--checkpoint',
  },
  {
    name: 'eval --json with a value',
    args: ['eval', '--config', 'cfg.json', '--json=yes'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--json',
  },
  {
    name: 'eval with an empty config',
    args: ['eval', '--config', 'cfg.json'],
    files: { 'cfg.json': {} },
    code: 'NO_ROLLOUT',
    where: 'cfg.json',
    key: 'presets',
  },
  {
    name: 'eval with a bad key',
    args: ['eval', '--config', 'cfg.json'],
    files: math({ eval: { temprature: 0.6 } }),
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'eval.temprature',
    says: /temperature/,
  },
  {
    name: 'info with a bad key',
    args: ['info', '--config', 'cfg.json'],
    files: math({ rollout: { promptsPerSteps: 4 } }),
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'rollout.promptsPerSteps',
  },
  {
    name: 'info with a bad --set',
    args: ['info', '--config', 'cfg.json', '--set', 'trainer.seed=0.5'],
    files: math(),
    code: 'CONFIG_OVERRIDE_INVALID',
    where: '--set trainer.seed=0.5',
    key: 'trainer.seed',
  },
  {
    name: 'info with malformed JSON',
    args: ['info', '--config', 'cfg.json'],
    files: { 'cfg.json': '{ presets: [math] }' },
    code: 'CONFIG_LOAD_FAILED',
    where: 'cfg.json',
  },
  { name: 'info with a missing --config', args: ['info', '--config', 'nope.yaml'], code: 'CONFIG_NOT_FOUND', where: 'nope.yaml' },
  {
    name: 'train --resume of nothing',
    args: ['train', '--config', 'cfg.json', '--resume', 'nope'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--resume',
  },
  { name: 'report of no directory', args: ['report'], code: 'INVALID_ARGUMENT', key: 'RUN_DIR' },
  { name: 'sft without --data', args: ['sft', '--config', 'cfg.json'], files: math(), code: 'INVALID_ARGUMENT', key: '--data' },
  {
    name: 'sft --data missing',
    args: ['sft', '--config', 'cfg.json', '--data', 'nope.jsonl'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--data',
  },
  {
    name: 'sft --data not JSON',
    args: ['sft', '--config', 'cfg.json', '--data', 'd.jsonl'],
    files: { ...math(), 'd.jsonl': '{"agent": "solver",\n' },
    code: 'INVALID_ARGUMENT',
    where: 'd.jsonl',
    key: 'line 1',
  },
  {
    name: 'sft --epochs in hex',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--epochs', '0x3'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--epochs',
  },
  {
    name: 'sft --epochs 1e9',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--epochs', '1000000000'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--epochs',
  },
  {
    name: 'sft --batch-size -1',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--batch-size', '-1'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--batch-size',
  },
  {
    name: 'sft --lr as words',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--lr', 'fast'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--lr',
  },
  {
    name: 'sft --dtype float16',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--dtype', 'float16'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--dtype',
  },
  {
    name: 'sft --schedule misspelt',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--schedule', 'cosin'],
    files: { ...math(), ...SFT_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--schedule',
  },
  {
    name: 'sft demonstrations for an agent the config lacks',
    args: ['sft', '--config', 'cfg.json', '--data', 'planner.jsonl'],
    files: { ...math(), 'planner.jsonl': '{"agent": "planner", "prompt": "Plan: 1+1\\n", "response": "add"}\n' },
    code: 'INVALID_ARGUMENT',
    key: '--data',
    says: /planner/,
  },
  {
    name: 'sft --out in /proc',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl', '--out', '/proc/drmas-sft'],
    files: { ...math(), ...SFT_DATA },
    code: 'OUTPUT_UNWRITABLE',
    key: '--out',
  },
  {
    name: 'sft with an empty config',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl'],
    files: { 'cfg.json': {}, ...SFT_DATA },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'presets',
  },
  {
    name: 'sft with a bad key',
    args: ['sft', '--config', 'cfg.json', '--data', 'demos.jsonl'],
    files: { ...math({ agents: { solver: { train: { microBatch: 4 } } } }), ...SFT_DATA },
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'agents.solver.train.microBatch',
  },
  {
    name: 'dpo pairs with a line missing "rejected"',
    args: ['dpo', '--config', 'cfg.json', '--data', 'pairs.jsonl'],
    files: {
      ...math(),
      ...DPO_DATA,
      'pairs.jsonl': `${DPO_DATA['pairs.jsonl']}{"agent": "solver", "prompt": "Solve: 2+2\\n", "chosen": "4"}\n`,
    },
    code: 'DATASET_INVALID',
    where: 'pairs.jsonl',
    key: 'line 2.rejected',
  },
  {
    name: 'dpo pairs without an agent, for a config of two agents',
    args: ['dpo', '--config', 'cfg.json', '--data', 'pairs.jsonl'],
    files: { ...math(), 'pairs.jsonl': '{"prompt": "Solve: 1+1\\n", "chosen": "2", "rejected": "3"}\n' },
    code: 'DATASET_INVALID',
    where: 'pairs.jsonl',
    key: 'line 1.agent',
    says: /solver, verifier/,
  },
  {
    name: 'dpo --loss misspelt',
    args: ['dpo', '--config', 'cfg.json', '--data', 'pairs.jsonl', '--loss', 'ipoo'],
    files: { ...math(), ...DPO_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--loss',
    says: /Did you mean "ipo"/,
  },
  {
    name: 'dpo --label-smoothing 0.5',
    args: ['dpo', '--config', 'cfg.json', '--data', 'pairs.jsonl', '--label-smoothing', '0.5'],
    files: { ...math(), ...DPO_DATA },
    code: 'INVALID_ARGUMENT',
    key: '--label-smoothing',
  },
  {
    name: 'algorithm.dpo.labelSmoothing 0.5',
    args: ['train', '--config', 'cfg.json'],
    files: math({ algorithm: { dpo: { labelSmoothing: 0.5 } } }),
    code: 'CONFIG_INVALID',
    where: 'cfg.json',
    key: 'algorithm.dpo.labelSmoothing',
  },
  {
    name: 'collect without --episodes',
    args: ['collect', '--config', 'cfg.json', '--out', 'd.jsonl'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--episodes',
  },
  {
    name: 'collect --out in /proc',
    args: ['collect', '--config', 'cfg.json', '--episodes', '2', '--out', '/proc/drmas-collect/d.jsonl'],
    files: math(),
    code: 'OUTPUT_UNWRITABLE',
    key: '--out',
  },
  {
    name: 'eval --episodes with --k',
    args: ['eval', '--config', 'cfg.json', '--episodes', '4', '--k', '2'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--k',
  },
  {
    name: 'eval --episodes 1e9 spelt out',
    args: ['eval', '--config', 'cfg.json', '--episodes', '1000000000'],
    files: math(),
    code: 'INVALID_ARGUMENT',
    key: '--episodes',
    says: /--episodes 1000000000: Too big/,
  },
];
