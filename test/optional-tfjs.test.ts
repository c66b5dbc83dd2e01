import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readdirSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, type InfoReport } from './support/cliRunner.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

/**
 * A CPU user's project: every `@drmas/*` package of the workspace except `@drmas/plugin-backend-tfjs`, which the
 * presets list as an optional peer dependency. The project lies outside the repository, so resolving the tfjs plugin
 * fails as it does where npm did not install it.
 */
const TFJS = '@drmas/plugin-backend-tfjs';
const INSTALL_TFJS = `npm i ${TFJS}`;
/** The presets: each trains on `auto` (onnx here). */
const ON_AUTO = ['code', 'debate', 'math', 'search', 'tools'];

let project: TempProject;

beforeAll(() => {
  project = new TempProject('no-tfjs', tmpdir());
  const scope = project.path('node_modules', '@drmas');
  mkdirSync(scope, { recursive: true });
  for (const name of readdirSync(path.join(REPO_ROOT, 'node_modules', '@drmas'))) {
    if (`@drmas/${name}` !== TFJS) symlinkSync(realpathSync(path.join(REPO_ROOT, 'node_modules', '@drmas', name)), path.join(scope, name));
  }
  for (const preset of ON_AUTO) {
    project.write({ [`${preset}.json`]: { presets: [preset], report: { html: false, progress: 'off' } } });
  }
  project.write({ 'tfjs.json': { presets: ['math'], models: { policy: { backend: 'tfjs' } }, report: { html: false, progress: 'off' } } });
});

afterAll(() => project.dispose());

describe('the presets without @drmas/plugin-backend-tfjs', () => {
  test.each(ON_AUTO)('%s loads and trains on auto, without the tfjs plugin', async (preset) => {
    const { code, stdout, stderr } = await runCli(['info', '--json', '--config', `${preset}.json`], project.dir);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const info = JSON.parse(stdout) as InfoReport;
    expect(info.plugins.map((p) => p.name)).toContain('backend-onnx');
    expect(info.plugins.map((p) => p.name)).not.toContain('backend-tfjs');
    expect(info.absentPlugins).toEqual([
      {
        name: 'backend-tfjs',
        package: TFJS,
        listedAt: `preset ${preset} presets[0] > optionalPlugins[0]`,
        provides: { 'models.<id>.backend': ['tfjs'] },
      },
    ]);
  });

  test('a config file that selects tfjs says at load which package to install, naming the file and key', async () => {
    const { code, stderr } = await runCli(['info', '--config', 'tfjs.json'], project.dir);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `error PLUGIN_NOT_FOUND (${project.path('tfjs.json')}: models.policy.backend): models.policy.backend is "tfjs", which comes with ${TFJS}; it is not installed`,
    );
    expect(stderr).toContain(`hint: ${INSTALL_TFJS}`);
  });

  test('a config that selects tfjs on the math preset fails at load, naming the key and the install command', async () => {
    for (const key of ['backend', 'rollout']) {
      const { code, stderr } = await runCli(['info', '--config', 'math.json', '--set', `models.policy.${key}=tfjs`], project.dir);
      expect(code).toBe(1);
      expect(stderr).toContain(
        `error PLUGIN_NOT_FOUND (--set models.policy.${key}=tfjs: models.policy.${key}): models.policy.${key} is "tfjs"`,
      );
      expect(stderr).toContain(`hint: ${INSTALL_TFJS}`);
    }
  });

  test('a critic trains on onnx alone: auto picks it for the critic group', async () => {
    const { code, stdout } = await runCli(
      ['info', '--config', 'math.json', '--set', 'critic.learner=ppo', '--set', 'algorithm.advantage=gae'],
      project.dir,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/critics:\n {2}id: policy; learner: ppo;.*backend: auto/);
    expect(stdout).toMatch(/id: policy; agents: solver, verifier; backend: auto \(onnx\)/);
  });
});
