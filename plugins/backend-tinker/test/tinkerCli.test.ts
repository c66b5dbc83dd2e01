import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { runBin, runCli, startBin, type InfoReport } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { client, stepView, tinkerBackend } from './tinkerFixtures.js';

/** `drmas info` on a config mixing a Tinker-trained model and a local one, and `drmas tinker-server` as a user runs it. */

const TINKER_URL = 'http://127.0.0.1:8123';
const project = new TempProject('tinker-cli');
afterAll(() => project.dispose());

/** The math preset with the solver's model on Tinker and the verifier on a model of its own on onnx. */
function mixedConfig(policy: Record<string, unknown> = {}) {
  return {
    presets: ['math'],
    plugins: ['backend-tinker'],
    models: {
      policy: { backend: 'tinker', tinker: { baseUrl: TINKER_URL }, ...policy },
      checker: { model: 'tiny', backend: 'onnx' },
    },
    agents: { verifier: { model: 'checker' } },
  };
}

describe('drmas info on a mixed config', () => {
  it('says each model samples and trains where a run would: tinker at its url, onnx here', async () => {
    project.write({ 'mixed.json': mixedConfig() });
    const json = await runCli(['info', '--config', project.path('mixed.json'), '--json'], project.dir);
    expect(json.code).toBe(0);
    const groups = (JSON.parse(json.stdout) as InfoReport).sections.workerGroups as Array<Record<string, unknown>>;
    expect(groups.map(({ id, agents, backend, rollout }) => ({ id, agents, backend, rollout }))).toEqual([
      { id: 'policy', agents: ['solver'], backend: `tinker at ${TINKER_URL}`, rollout: `tinker at ${TINKER_URL}` },
      { id: 'checker', agents: ['verifier'], backend: 'onnx', rollout: 'onnx' },
    ]);
    const text = await runCli(['info', '--config', project.path('mixed.json')], project.dir);
    expect(text.stdout).toContain(`id: policy; agents: solver; backend: tinker at ${TINKER_URL}; rollout: tinker at ${TINKER_URL};`);
  });

  it('refuses a local rollout engine for a model trained on Tinker, and a tinker model with no server', async () => {
    project.write({ 'onnxRollout.json': mixedConfig({ rollout: 'onnx' }), 'noServer.json': mixedConfig({ tinker: undefined }) });
    const rollout = await runCli(['info', '--config', project.path('onnxRollout.json')], project.dir);
    expect(rollout.code).toBe(1);
    expect(rollout.stderr).toContain('error CONFIG_INVALID');
    expect(rollout.stderr).toContain('models.policy.rollout');
    const noServer = await runCli(['info', '--config', project.path('noServer.json')], project.dir);
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toContain('models.policy.tinker');
  });
});

describe("drmas tinker-server's engine, chosen by the engine service", () => {
  it('is among the engines --config loads (auto: the best of them), and an unknown --engine gets "Did you mean"', async () => {
    const unknown = await runCli(['tinker-server', '--engine', 'onxx', '--port', '0'], project.dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'error UNKNOWN_NAME (--engine): no engine named "onxx" is registered (registered: onnx, tfjs)\n  hint: Did you mean "onnx"?\n',
    );
    project.write({ 'tfjsOnly.json': { plugins: ['backend-tfjs'] } });
    const server = startBin(['tinker-server', '--port', '0', '--config', project.path('tfjsOnly.json')]);
    try {
      await server.waitFor(/listening at http:\/\/\S+/, 60_000);
      expect(server.output()).toMatch(/listening at http:\/\/\S+ \(engine tfjs,/);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect((await server.exited).code).toBe(0);
  });
});

describe('drmas tinker-server in its own process', () => {
  it('serves the API with an API key and 408 answers while a request runs; stops on SIGTERM', async () => {
    process.env.DRMAS_TINKER_TEST_KEY = 'sesame';
    const server = startBin([
      'tinker-server',
      ...['--port', '0', '--engine', 'onnx', '--api-key-env', 'DRMAS_TINKER_TEST_KEY'],
      ...['--pending', '408', '--delay-ms', '40', '--hold-ms', '5'],
    ]);
    try {
      await server.waitFor(/listening at http:\/\/\S+/, 60_000);
      const url = /listening at (http:\/\/\S+)/.exec(server.output())![1]!;
      const refused = await client(url)
        .call('create_model', () => ({ base_model: 'tiny' }), { idempotent: false })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'SERVICE_FAILED' });
      expect((refused as Error).message).toContain('HTTP 401');
      const keyed = client(url, { apiKey: 'sesame' });
      const backend = await tinkerBackend(keyed);
      const { logProbs } = await backend.score({ batch: stepView(0) });
      expect(logProbs.every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
      expect(keyed.stats.timeouts).toBeGreaterThan(0);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect((await server.exited).code).toBe(0);
  });

  it('removes the temporary weights folder it made when it stops, and keeps a --data-dir', async () => {
    const dataDir = project.path('tinker-data');
    for (const [k, args] of [[], ['--data-dir', dataDir]].entries()) {
      const server = startBin(['tinker-server', '--port', '0', '--engine', 'onnx', ...args]);
      let folder: string;
      try {
        await server.waitFor(/weights in \S+/, 60_000);
        folder = /weights in ([^,)]+)/.exec(server.output())![1]!;
        const url = /listening at (http:\/\/\S+)/.exec(server.output())![1]!;
        // A save writes a checkpoint into the folder, so the removal has something to remove.
        const tinker = await tinkerBackend(client(url));
        await tinker.save(project.path(`pointer-${k}`));
        expect(readdirSync(folder).length).toBeGreaterThan(0);
      } finally {
        server.child.kill('SIGTERM');
      }
      expect((await server.exited).code).toBe(0);
      expect(existsSync(folder)).toBe(args.length > 0);
    }
  });
});

describeSlow('drmas train on examples/math/tinker.json against drmas tinker-server', () => {
  it('trains two steps, checkpoints a pointer to the server weights, and resumes from it for a third', async () => {
    const server = startBin(['tinker-server', '--port', '0', '--engine', 'onnx']);
    try {
      await server.waitFor(/listening at http:\/\/\S+/, 60_000);
      const url = /listening at (http:\/\/\S+)/.exec(server.output())![1]!;
      const runDir = project.path('run');
      const common = ['--config', 'examples/math/tinker.json', '--set', `models.policy.tinker.baseUrl=${url}`, '--run-dir', runDir];
      const quiet = ['--set', 'eval.atStart=false', '--set', 'eval.atEnd=false'];
      const first = runBin(['train', ...common, ...quiet, '--set', 'trainer.steps=2', '--set', 'trainer.saveEvery=2'], undefined, 300_000);
      expect(first.stderr).toContain(`trains on tinker ${url}`);
      expect(first.code).toBe(0);
      const pointer = JSON.parse(readFileSync(project.path('run', 'checkpoints', 'step-000002', 'policy', 'tinker.json'), 'utf8')) as {
        path: string;
      };
      expect(pointer.path).toMatch(/^tinker:\/\/model_\d+\/weights\//);
      const resumed = runBin(
        ['train', ...common, ...quiet, '--set', 'trainer.steps=3', '--resume', project.path('run', 'checkpoints', 'step-000002')],
        undefined,
        300_000,
      );
      expect(resumed.code).toBe(0);
      const steps = readFileSync(project.path('run', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { step: number }).step);
      expect(steps).toEqual([1, 2, 3]);
      expect(existsSync(project.path('run', 'checkpoints', 'step-000003', 'policy', 'tinker.json'))).toBe(true);

      // The server computes one gradient and applies every step it is sent: no per-agent norms, no measuring pass.
      const diagnosed = runBin(
        [
          'train',
          '--config',
          'examples/math/tinker.json',
          '--set',
          `models.policy.tinker.baseUrl=${url}`,
          ...quiet,
          '--set',
          'trainer.agentDiagnostics=true',
          '--run-dir',
          project.path('diagnosed'),
        ],
        undefined,
        300_000,
      );
      expect(diagnosed.stderr).toContain('cannot split its gradient by agent');
    } finally {
      server.child.kill('SIGTERM');
    }
  });
});
