import { afterAll, afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, DrmasError, type Plugin, type UserConfig } from '@drmas/core';
import { mathPreset } from '@drmas/preset-math';
import { configParams, MlflowClient, mlflowName, MlflowPlugin, mlflowValue } from '../src/index.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { MlflowStandIn } from './mlflowStandIn.js';
import { RecordingProxy } from '../../../test/support/recordingProxy.js';
import { readMetricLines } from '../../../test/support/runFiles.js';

const scratch = new TempProject('mlflow');
afterAll(() => scratch.dispose());

let server: MlflowStandIn;
let uri: string;
beforeEach(async () => {
  server = new MlflowStandIn();
  uri = await server.start();
});
afterEach(() => server.stop());

const bandit = (extra: UserConfig = {}): UserConfig => ({
  plugins: [
    ['bandit', { arms: 4, agents: ['proposer', 'checker'], groups: 2, samplesPerGroup: 4 }],
    new MlflowPlugin({ MLFLOW_TRACKING_URI: uri }),
  ],
  trainer: { steps: 3, seed: 7 },
  ...extra,
});

async function train(config: UserConfig, runDir: string, logs: string[] = []): Promise<void> {
  const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: config });
  await kernel.run({ runDir, log: (m) => logs.push(m) });
}

describe('names and values', () => {
  test("MLflow's character set: @ reads as _at_, other characters outside it become _", () => {
    expect(mlflowName('val/avg@16')).toBe('val/avg_at_16');
    expect(mlflowName('a:b|c')).toBe('a_b_c');
    expect(mlflowName('actor/policy/grad_norm x-1.5')).toBe('actor/policy/grad_norm x-1.5');
  });

  test('names a path normalization would change (which MLflow refuses) get their empty, . and .. segments replaced', () => {
    expect(mlflowName('a//b')).toBe('a/_/b');
    expect(mlflowName('/x')).toBe('_/x');
    expect(mlflowName('x/')).toBe('x/_');
    expect(mlflowName('a/./b')).toBe('a/_/b');
    expect(mlflowName('../x')).toBe('__/x');
    expect(mlflowName('...x')).toBe('_...x');
    expect(mlflowName('env.files.data/x.json')).toBe('env.files.data/x.json');
  });

  test('non-finite values are spelt as protobuf JSON spells them', () => {
    expect([mlflowValue(0.5), mlflowValue(NaN), mlflowValue(Infinity), mlflowValue(-Infinity)]).toEqual([
      0.5,
      'NaN',
      'Infinity',
      '-Infinity',
    ]);
  });

  test('the config as params: one per leaf by key path, arrays whole, strings bare', () => {
    expect(configParams({ trainer: { steps: 3, seed: 0 }, presets: ['math'], models: { policy: { model: 'tiny' } }, empty: {} })).toEqual([
      { key: 'trainer.steps', value: '3' },
      { key: 'trainer.seed', value: '0' },
      { key: 'presets', value: '["math"]' },
      { key: 'models.policy.model', value: 'tiny' },
    ]);
  });
});

describe('@drmas/plugin-mlflow against a local stand-in of the tracking server', () => {
  test('creates the experiment and a run, logs the config and every metric at its step, then FINISHED', async () => {
    const runDir = scratch.path('bandit');
    const logs: string[] = [];
    await train(bandit(), runDir, logs);

    expect([...server.experiments.keys()]).toEqual(['drmas']);
    expect(server.runs.size).toBe(1);
    const run = [...server.runs.values()][0]!;
    expect(run.runName).toBe('bandit');
    expect(run.tags.get('mlflow.runName')).toBe('bandit');
    expect(run.tags.get('drmas.runDir')).toBe(runDir);
    expect(run.params.get('trainer.steps')).toBe('3');
    expect(run.params.get('trainer.seed')).toBe('7');
    const expected = readMetricLines(runDir).flatMap(({ step, ...metrics }) =>
      Object.entries(metrics).map(([key, value]) => ({ key, value, step })),
    );
    expect(run.metrics.map(({ key, value, step }) => ({ key, value, step }))).toEqual(expected);
    expect(run.statuses).toEqual(['FINISHED']);
    expect(run.endTime).toBeGreaterThanOrEqual(run.startTime);
    expect(JSON.parse(readFileSync(path.join(runDir, 'mlflow.json'), 'utf8'))).toEqual({
      trackingUri: uri,
      experimentId: run.experimentId,
      runId: run.runId,
    });
    expect(logs).toContain(`mlflow: run ${run.runId} in experiment drmas (${run.experimentId}) at ${uri}`);
  });

  test('an existing experiment is reused; mlflow.runName and tags name the run', async () => {
    await new MlflowClient({ trackingUri: uri, timeoutMs: 1000, retries: 0, retryDelayMs: 1 }).experiment('team');
    await train(bandit({ mlflow: { experiment: 'team', runName: 'trial-1', tags: { owner: 'me' } } }), scratch.path('named'));
    expect(server.experiments.size).toBe(1);
    const run = [...server.runs.values()][0]!;
    expect(run.experimentId).toBe(server.experiments.get('team')!.id);
    expect(run.runName).toBe('trial-1');
    expect(run.tags.get('owner')).toBe('me');
  });

  test('503s are retried, and the run loses nothing', async () => {
    server.failNext(2, 503, 'runs/log-batch');
    const runDir = scratch.path('retried');
    await train(bandit(), runDir);
    const run = [...server.runs.values()][0]!;
    expect(run.metrics.length).toBe(readMetricLines(runDir).reduce((n, line) => n + Object.keys(line).length - 1, 0));
    expect(server.requests.filter((r) => r.endsWith('runs/log-batch')).length).toBeGreaterThanOrEqual(2 + 1 + 3);
  });

  test('a server that stops answering mid-run costs one warning, not the run', async () => {
    const runDir = scratch.path('flaky');
    const logs: string[] = [];
    // The params and step 1 go through; from step 2 on every request fails.
    const breakServer: Plugin = {
      name: 'break-server',
      apply(kernel) {
        kernel.hooks.afterStep.tap('break-server', ({ step }) => {
          if (step === 2) server.failNext(1000, 500);
        });
      },
    };
    const config = bandit({ mlflow: { retries: 0 } });
    await train({ ...config, plugins: [...config.plugins!, breakServer] }, runDir, logs);
    expect(readMetricLines(runDir)).toHaveLength(3);
    expect(new Set([...server.runs.values()][0]!.metrics.map((m) => m.step))).toEqual(new Set([1]));
    const warnings = logs.filter((l) => l.startsWith('warning: mlflow:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/not logged \(they are in metrics\.jsonl\): MLflow runs\/log-batch failed: HTTP 500 INTERNAL_ERROR/);
  });

  test('a deleted experiment of the name costs a warning: the run goes to <name>-2 (MLflow keeps the name until gc)', async () => {
    const client = new MlflowClient({ trackingUri: uri, timeoutMs: 1000, retries: 0, retryDelayMs: 1 });
    await client.experiment('team');
    server.deleteExperiment('team');
    const logs: string[] = [];
    await train(bandit({ mlflow: { experiment: 'team' } }), scratch.path('deleted'), logs);
    const run = [...server.runs.values()][0]!;
    expect(run.experimentId).toBe(server.experiments.get('team-2')!.id);
    expect(run.statuses).toEqual(['FINISHED']);
    expect(logs.filter((l) => l.startsWith('warning: mlflow:'))).toEqual([
      'warning: mlflow: the experiment "team" is deleted, so this run goes to "team-2"; restore it (mlflow experiments restore) to log there again, or free the name (mlflow gc)',
    ]);
    // The next run finds team-2 active and logs there too, without a second experiment.
    server.deleteExperiment('team-2');
    await train(bandit({ mlflow: { experiment: 'team' } }), scratch.path('deleted-again'), logs);
    expect([...server.experiments.keys()]).toEqual(['team', 'team-2', 'team-3']);
  });

  test('params a server refuses cost a warning, not the run: values over 500 characters cut, clashing names renamed, bad ones left out', async () => {
    server.maxParamValueLength = 500; // an MLflow 2.0 to 2.7 server
    const logs: string[] = [];
    const long = 'x'.repeat(600);
    const tooLongName = 'k'.repeat(250);
    const tags = { note: long, 'a@b': 'first', a_at_b: 'second', [tooLongName]: 'v', 'dir/': 'path-like' };
    await train(bandit({ mlflow: { tags } }), scratch.path('refused'), logs);
    const run = [...server.runs.values()][0]!;
    expect(run.statuses).toEqual(['FINISHED']);
    expect(run.params.get('trainer.steps')).toBe('3');
    expect(run.params.get('mlflow.tags.note')).toBe(long.slice(0, 500));
    expect(run.params.get('mlflow.tags.a_at_b')).toBe('first');
    expect(run.params.get('mlflow.tags.a_at_b_2')).toBe('second');
    expect(run.params.get('mlflow.tags.dir/_')).toBe('path-like');
    expect([...run.params.keys()].some((key) => key.includes(tooLongName))).toBe(false);
    expect(run.metrics.length).toBeGreaterThan(0);
    const warnings = logs.filter((l) => l.startsWith('warning: mlflow:'));
    expect(warnings).toEqual([
      `warning: mlflow: of the config's params, 1 the server refused were left out (mlflow.tags.${tooLongName}); 1 were cut to 500 characters, the limit of MLflow servers before 2.8 (mlflow.tags.note); 1 had a name taken by an earlier param and got a _2 suffix (mlflow.tags.a_at_b); config.json in the run directory has them all`,
    ]);
  });

  test('no server at setup stops the run before training, naming mlflow.trackingUri', async () => {
    await server.stop();
    const runDir = scratch.path('down');
    const error = await train(bandit({ mlflow: { retries: 0 } }), runDir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(DrmasError.is(error) && error.code).toBe('SERVICE_FAILED');
    expect((error as DrmasError).key).toBe('mlflow.trackingUri');
    expect((error as DrmasError).message).toMatch(/^MLflow experiments\/get-by-name failed: /);
  });

  test('no tracking URI anywhere is a config error at validate', async () => {
    const error = await createKernel({
      cwd: REPO_ROOT,
      inline: { plugins: [['bandit', {}], new MlflowPlugin({})], trainer: { steps: 1 } },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'mlflow.trackingUri' });
  });

  test('credentials from MLFLOW_TRACKING_TOKEN go as a bearer token', async () => {
    await server.stop();
    server = new MlflowStandIn('s3cret');
    uri = await server.start();
    const config = bandit();
    config.plugins = [config.plugins![0]!, new MlflowPlugin({ MLFLOW_TRACKING_URI: uri, MLFLOW_TRACKING_TOKEN: 's3cret' })];
    await train(config, scratch.path('token'));
    expect([...server.runs.values()][0]!.statuses).toEqual(['FINISHED']);
  });

  test('a password in the tracking URI goes as basic auth and stays out of mlflow.json and the log; a resumed run finds its MLflow run', async () => {
    const runDir = scratch.path('resumed');
    const proxy = new RecordingProxy(uri);
    const withPassword = (await proxy.start()).replace('http://', 'http://ana:pa%24%24word@');
    const logs: string[] = [];
    const small: UserConfig = {
      presets: [mathPreset],
      plugins: [new MlflowPlugin({ MLFLOW_TRACKING_URI: withPassword })],
      rollout: { promptsPerStep: 1, samplesPerPrompt: 2 },
      eval: { atStart: false, atEnd: false },
      report: { html: false, progress: 'off' },
    };
    await train({ ...small, trainer: { steps: 1, seed: 0 } }, runDir, logs);
    const saved = readFileSync(path.join(runDir, 'mlflow.json'), 'utf8');
    expect((JSON.parse(saved) as { trackingUri: string }).trackingUri).toBe(withPassword.replace('ana:pa%24%24word', '***'));
    const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: { ...small, trainer: { steps: 2, seed: 0 } } });
    await kernel.run({ runDir, resume: 'auto', log: (m) => logs.push(m) });
    await proxy.stop();
    expect(server.runs.size).toBe(1);
    const run = [...server.runs.values()][0]!;
    expect(run.statuses).toEqual(['FINISHED', 'RUNNING', 'FINISHED']);
    // "ana:pa$$word" in base64, worked out apart from the code under test
    expect(new Set(proxy.requests.map((r) => r.headers.authorization))).toEqual(new Set(['Basic YW5hOnBhJCR3b3Jk']));
    expect(logs.some((line) => line.startsWith('mlflow: resuming run'))).toBe(true);
    expect(`${saved}${logs.join('\n')}`).not.toMatch(/pa%24%24word|pa\$\$word/);
    expect([...new Set(run.metrics.map((m) => m.step))]).toEqual([1, 2]);
    expect(run.metrics.find((m) => m.key === 'val/avg_at_16')).toBeUndefined();
  });
});
