import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { runCli, type InfoReport } from '../../test/support/cliRunner.js';
import { TempProject } from '../../test/support/tempProject.js';
import type { ResolvedConfig } from '@drmas/core';

const project = new TempProject('cli').write({
  'drmas.config.json': { plugins: ['./team.js'], algorithm: { advantage: 'mean-baseline' }, trainer: { steps: 2 } },
  'team.js': `
import { AdvantageEstimator, agent, Stage } from '@drmas/core';
class Solver {}
agent('solver')(Solver);
export default {
  name: 'team',
  register(ctx) {
    ctx.agents.register(Solver);
    ctx.provide(AdvantageEstimator, 'mean-baseline', { name: 'mean-baseline', estimate: (b) => b });
  },
  apply(kernel) {
    kernel.hooks.setup.tap({ name: 'team', stage: Stage.BACKEND }, () => {});
    kernel.hooks.rollout.tapPromise('team', async () => ({ trajectories: [], metrics: {} }));
    kernel.hooks.afterStep.tap('team', (r) => { r.metrics['team/ok'] = 1; });
  },
};
`,
  'bad.json': '{ "trainer": { "steps": "two" } }',
  'node_modules/drmas-plugin-greeter/package.json': {
    name: 'drmas-plugin-greeter',
    version: '1.0.0',
    type: 'module',
    main: 'index.js',
    drmas: {
      commands: {
        greet: { module: './commands.js', summary: 'say hello' },
        refuse: { module: './commands.js', summary: 'refuse to greet' },
        broken: { module: './missing.js', summary: 'never loads' },
      },
    },
  },
  'node_modules/drmas-plugin-greeter/index.js': 'export default { name: "greeter", apply() {} };\n',
  'node_modules/drmas-plugin-greeter/commands.js': `import { DrmasError } from '@drmas/core';
class GreetingError extends DrmasError {
  constructor(name) { super('INVALID_ARGUMENT', 'cannot greet "' + name + '"', { key: '--name', hint: 'give a name of letters' }); }
}
export const refuseCommand = {
  name: 'refuse', summary: 'refuse to greet', usage: 'drmas refuse --name N', help: [], options: { name: { type: 'string' } },
  async run({ values }) { throw new GreetingError(values.name); },
};
export const greetCommand = {
  name: 'greet', summary: 'say hello', usage: 'drmas greet --name N', help: [['--name N', 'who']],
  options: { name: { type: 'string' } },
  async run({ values }, io) { io.stdout.write('hello ' + values.name + '\\n'); return 0; },
};\n`,
});
afterAll(() => project.dispose());

describe('drmas CLI', () => {
  test('info --json lists plugins, hooks with their taps in call order, and registered roles', async () => {
    const { code, stdout } = await runCli(['info', '--json'], project.dir);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as InfoReport;
    expect(report.configFile).toBe(project.path('drmas.config.json'));
    expect(report.plugins.map((p) => p.name)).toEqual(['drmas:advantage', 'drmas:run-directory', 'drmas:engines', 'team']);
    expect(report.plugins[3]?.resolvedFrom).toBe(project.path('team.js'));
    expect(report.hooks.setup).toEqual([
      { name: 'drmas:run-directory', type: 'promise', stage: -1000 },
      { name: 'team', type: 'sync', stage: -300 },
    ]);
    expect(report.hooks.advantage?.map((t) => t.name)).toEqual(['drmas:advantage']);
    expect(report.hooks.validate?.map((t) => t.name)).toEqual(['drmas:advantage']);
    expect(report.hooks.rollout).toEqual([{ name: 'team', type: 'promise', stage: 0 }]);
    expect(Object.keys(report.hooks)).toHaveLength(15);
    expect(report.roles.Agent?.entries).toEqual([{ name: 'solver', plugin: 'team' }]);
    expect(report.roles.AdvantageEstimator).toEqual({
      label: 'advantage estimator',
      configKey: 'algorithm.advantage',
      entries: [{ name: 'mean-baseline', plugin: 'team' }],
    });
    expect(report.roles.BackendFactory?.entries).toEqual([]);
  });

  test('info prints a readable report', async () => {
    const { code, stdout } = await runCli(['info'], project.dir);
    expect(code).toBe(0);
    expect(stdout).toContain('rollout       team');
    expect(stdout).toContain('agents:\n  solver');
  });

  test('train writes the resolved config and one metrics line per step', async () => {
    const runDir = project.path('run');
    const { code, stderr } = await runCli(['train', '--run-dir', runDir, '--set', 'trainer.steps=3'], project.dir);
    expect(stderr).toContain('3 steps');
    expect(code).toBe(0);
    const lines = readFileSync(`${runDir}/metrics.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3]);
    expect(lines[0]?.['team/ok']).toBe(1);
    expect(typeof lines[0]?.['timing/rollout']).toBe('number');
    const config = JSON.parse(readFileSync(`${runDir}/config.json`, 'utf8')) as ResolvedConfig;
    expect(config.trainer.steps).toBe(3);
    expect(config.plugins).toEqual(['./team.js']);
  });

  test('a user error exits non-zero with the message and no stack trace', async () => {
    const { code, stderr } = await runCli(['train', '--config', 'bad.json'], project.dir);
    expect(code).toBe(1);
    expect(stderr).toContain('error CONFIG_INVALID');
    expect(stderr).toContain('trainer.steps: expected number, received string');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  test('--verbose adds the stack', async () => {
    const { stderr } = await runCli(['train', '--config', 'bad.json', '--verbose'], project.dir);
    expect(stderr).toMatch(/\n\s+at /);
  });

  test('help for drmas and for each command; unknown commands and flags get suggestions', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/train .*\n.*eval .*\n.*info /);
    for (const command of ['train', 'eval', 'info']) {
      const help = await runCli([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`usage: drmas ${command}`);
      expect(help.stdout).toContain('--config PATH');
    }
    const unknown = await runCli(['trian']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error INVALID_ARGUMENT \(trian\): unknown command "trian"\n {2}hint: Did you mean "train"\?\n/);
    const flag = await runCli(['train', '--confg', 'x']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe(`error INVALID_ARGUMENT (--confg): Unknown option '--confg'\n  hint: Did you mean "--config"?\n`);
    // parseArgs calls a value starting with "-" ambiguous; the message names it and how to write it.
    const dashed = await runCli(['generate', '--max-new-tokens', '-1']);
    expect(dashed.code).toBe(1);
    expect(dashed.stderr).toMatch(
      /^error INVALID_ARGUMENT \(--max-new-tokens\): --max-new-tokens takes a value, and what follows it \("-1"\) starts with "-"\n {2}hint: write a value that starts with "-" joined by "=": --max-new-tokens=-1 \(usage: drmas generate /,
    );
    const forgotten = await runCli(['generate', '--max-new-tokens', '--seed', '3']);
    expect(forgotten.stderr).toMatch(
      /^error INVALID_ARGUMENT \(--max-new-tokens\): --max-new-tokens takes a value, but --seed follows it\n {2}hint: give --max-new-tokens its value before --seed /,
    );
    const none = await runCli([]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error INVALID_ARGUMENT \(command\): no command given\n[\s\S]*usage: drmas <command>/);
  });

  test('installed packages contribute commands through their manifest, listed in help and loaded on use', async () => {
    const help = await runCli(['--help'], project.dir);
    expect(help.stdout).toMatch(/greet +say hello/);
    const greet = await runCli(['greet', '--name', 'ada'], project.dir);
    expect(greet).toMatchObject({ code: 0, stdout: 'hello ada\n' });
    expect((await runCli(['greet', '--help'], project.dir)).stdout).toContain('usage: drmas greet --name N');
    const broken = await runCli(['broken'], project.dir);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('command "broken" of drmas-plugin-greeter failed to load');
  });

  test('a DrmasError subclass of an installed package is a user error, named after its class under --verbose', async () => {
    const { code, stderr } = await runCli(['refuse', '--name', '42'], project.dir);
    expect(code).toBe(1);
    expect(stderr).toBe('error INVALID_ARGUMENT (--name): cannot greet "42"\n  hint: give a name of letters\n');
    expect((await runCli(['refuse', '--name', '42', '--verbose'], project.dir)).stderr).toContain(
      '\nGreetingError: cannot greet "42"\n    at ',
    );
  });

  test('eval without an evaluate tap says what is missing', async () => {
    const { code, stderr } = await runCli(['eval'], project.dir);
    expect(code).toBe(1);
    expect(stderr).toContain(`error NO_ROLLOUT (${project.path('drmas.config.json')}: presets): nothing in`);
    expect(stderr).toContain('evaluates: no preset or plugin taps the evaluate hook');
  });
});
