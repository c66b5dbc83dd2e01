import { afterAll, afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, DrmasError, Stage, type Plugin, type UserConfig } from '@drmas/core';
import { mathPreset } from '@drmas/preset-math';
import { historyLine, parseHistoryLine, WANDB_TIMING, WandbPlugin } from '../src/index.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';
import { readMetricLines } from '../../../test/support/runFiles.js';
import { WandbStandIn, type StoredRun } from './wandbStandIn.js';

const scratch = new TempProject('wandb');
afterAll(() => scratch.dispose());

let server: WandbStandIn;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  server = new WandbStandIn();
  env = { WANDB_BASE_URL: await server.start(), WANDB_API_KEY: server.apiKey };
});
afterEach(() => server.stop());

const bandit = (extra: UserConfig = {}, plugin = new WandbPlugin(env)): UserConfig => ({
  plugins: [['bandit', { arms: 4, agents: ['proposer', 'checker'], groups: 2, samplesPerGroup: 4 }], plugin],
  trainer: { steps: 3, seed: 7 },
  ...extra,
});

async function train(config: UserConfig, runDir: string, logs: string[] = []): Promise<void> {
  const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: config });
  await kernel.run({ runDir, log: (m) => logs.push(m) });
}

function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** The run's history as `{ _step, ...metrics }` records, W&B's own timing keys left out. */
function history(run: StoredRun): Array<Record<string, unknown>> {
  return run.history.map((line) => {
    const { _runtime, _timestamp, ...rest } = parseHistoryLine(line);
    expect(typeof _runtime).toBe('number');
    expect(typeof _timestamp).toBe('number');
    return rest;
  });
}

/** metrics.jsonl as W&B history records: `step` read as `_step`. */
function expectedHistory(runDir: string): Array<Record<string, unknown>> {
  return readMetricLines(runDir).map(({ step, ...metrics }) => ({ ...metrics, _step: step }));
}

describe('history lines', () => {
  test('non-finite values are the bare tokens W&B writes (NaN, Infinity), strings stay strings', () => {
    const line = historyLine({ a: NaN, b: Infinity, c: -Infinity, d: 1.5, s: 'NaN', n: { x: -Infinity } });
    expect(line).toBe('{"a":NaN,"b":Infinity,"c":-Infinity,"d":1.5,"s":"NaN","n":{"x":-Infinity}}');
    expect(parseHistoryLine(line)).toEqual({ a: NaN, b: Infinity, c: -Infinity, d: 1.5, s: 'NaN', n: { x: -Infinity } });
  });
});

describe('@drmas/plugin-wandb against a local stand-in of the W&B server', () => {
  test('a run: Viewer for the entity, UpsertBucket with the config, every metrics line at its step, exit code 0', async () => {
    const runDir = scratch.path('bandit');
    const logs: string[] = [];
    await train(bandit(), runDir, logs);

    expect(server.operations()).toEqual(['Viewer', 'UpsertBucket']);
    const upsert = server.requests.find((r) => r.operation === 'UpsertBucket')!.variables!;
    expect(upsert).toMatchObject({ project: 'drmas', entity: 'drmas-user', displayName: 'bandit' });
    expect(upsert.name).toMatch(/^[a-z0-9]{8}$/);
    expect(upsert).not.toHaveProperty('groupName');
    const config = JSON.parse(upsert.config as string) as Record<string, { value: Record<string, unknown> }>;
    expect(config.trainer!.value).toMatchObject({ steps: 3, seed: 7 });
    expect(config.plugins!.value).toEqual(['drmas-plugin-bandit', '[inline wandb]']);
    expect(Object.values(config).every((entry) => Object.keys(entry).join() === 'value')).toBe(true);

    const run = server.onlyRun();
    expect(history(run)).toEqual(expectedHistory(runDir));
    expect(parseHistoryLine(run.summary!)).toMatchObject(expectedHistory(runDir).at(-1)!);
    expect(run.exitcodes).toEqual([0]);
    const streams = server.fileStreams();
    expect(streams.at(-1)).toMatchObject({ complete: true, exitcode: 0 });
    expect(streams.filter((s) => s.complete)).toHaveLength(1);
    expect(JSON.parse(readFileSync(path.join(runDir, 'wandb.json'), 'utf8'))).toEqual({
      baseUrl: env.WANDB_BASE_URL,
      entity: 'drmas-user',
      project: 'drmas',
      runId: run.name,
    });
    expect(logs).toContain(`wandb: run bandit at ${env.WANDB_BASE_URL}/drmas-user/drmas/runs/${run.name}`);
  });

  test('project, entity, name, group and tags from the config; no Viewer when the entity is named', async () => {
    const wandb = { project: 'agents', entity: 'team-rl', name: 'trial-1', group: 'sweep-a', tags: ['bandit', 'smoke'] };
    await train(bandit({ wandb }), scratch.path('named'));
    expect(server.operations()).toEqual(['UpsertBucket']);
    expect(server.requests[0]!.variables).toMatchObject({
      project: 'agents',
      entity: 'team-rl',
      displayName: 'trial-1',
      groupName: 'sweep-a',
      tags: ['bandit', 'smoke'],
    });
    const run = server.onlyRun();
    expect([run.entity, run.project, run.group, run.tags]).toEqual(['team-rl', 'agents', 'sweep-a', ['bandit', 'smoke']]);
  });

  test("W&B's environment variables fill what the config leaves out", async () => {
    Object.assign(env, { WANDB_PROJECT: 'from-env', WANDB_ENTITY: 'team-rl', WANDB_RUN_GROUP: 'g', WANDB_TAGS: 'a, b' });
    await train(bandit(), scratch.path('env'));
    expect(server.requests[0]!.variables).toMatchObject({ project: 'from-env', entity: 'team-rl', groupName: 'g', tags: ['a', 'b'] });
  });

  test('503s are retried, and W&B gets every line', async () => {
    server.failNext(2, 503, 'file_stream');
    const runDir = scratch.path('retried');
    await train(bandit(), runDir);
    expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));
  });

  test('an outage mid-run costs one warning; the lines go again once the server is back, at their offsets', async () => {
    const runDir = scratch.path('outage');
    const logs: string[] = [];
    // From step 2 the server answers 500 to everything; before step 4 (once it has failed a request) it is back.
    const outage: Plugin = {
      name: 'outage',
      apply(kernel) {
        kernel.hooks.beforeStep.tapPromise('outage', async ({ step }) => {
          if (step === 2) server.failNext(1000, 500);
          if (step === 4) {
            await server.injectedFailures(1);
            server.recover();
          }
        });
      },
    };
    const config = bandit({ wandb: { retries: 0 }, trainer: { steps: 4, seed: 7 } });
    await train({ ...config, plugins: [...config.plugins!, outage] }, runDir, logs);
    expect(readMetricLines(runDir)).toHaveLength(4);
    const warnings = logs.filter((l) => l.startsWith('warning: wandb:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/W&B file_stream failed: HTTP 500: .*the lines not taken go again with the next request/);
    expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));
    expect(server.onlyRun().exitcodes).toEqual([0]);
  });

  test('a server that never comes back: training ends normally, with a warning that counts the lines W&B lacks', async () => {
    const runDir = scratch.path('gone');
    const logs: string[] = [];
    const stopServer: Plugin = {
      name: 'stop-server',
      apply(kernel) {
        kernel.hooks.afterStep.tapPromise({ name: 'stop-server', stage: -1 }, async ({ step }) => {
          if (step === 1) await server.stop();
        });
      },
    };
    // finishTimeoutMs 0: the last request is tried once, not for W&B's seven days.
    const config = bandit({ wandb: { retries: 0, finishTimeoutMs: 0 } });
    await train({ ...config, plugins: [...config.plugins!, stopServer] }, runDir, logs);
    expect(readMetricLines(runDir)).toHaveLength(3);
    const warnings = logs.filter((l) => l.startsWith('warning: wandb:'));
    expect(warnings).toEqual([
      expect.stringMatching(/^warning: wandb: W&B file_stream failed: connection failed \((ECONNREFUSED|ECONNRESET|UND_ERR_SOCKET)/),
      'warning: wandb: 3 history lines never reached W&B (they are in metrics.jsonl)',
    ]);
  });

  describe("the server's contract as wandb-core keeps it (wandb b6e29505), on a compressed clock", () => {
    // The stand-in's crash sweep at 300 ms stands for W&B's five minutes; the plugin's heartbeat at 50 ms for its 30 s.
    const fast = { ...WANDB_TIMING, heartbeatMs: 50, finishDelayMs: 1, finishMaxDelayMs: 5 };
    const slowStep = (ms: number): Plugin => ({
      name: 'slow-step',
      apply(kernel) {
        kernel.hooks.beforeStep.tapPromise('slow-step', async ({ step }) => {
          if (step === 2) await new Promise((resolve) => setTimeout(resolve, ms));
        });
      },
    });
    /** From `shutdown` on (before the plugin's last request), the next `count` file_stream requests fail with 503. */
    const failingAtShutdown = (count: number): Plugin => ({
      name: 'failing-at-shutdown',
      apply(kernel) {
        kernel.hooks.shutdown.tap({ name: 'failing-at-shutdown', stage: Stage.FIRST }, () => server.failNext(count, 503, 'file_stream'));
      },
    });
    async function compressedServer(): Promise<void> {
      await server.stop();
      server = new WandbStandIn();
      server.staleAfterMs = 300;
      env = { WANDB_BASE_URL: await server.start(), WANDB_API_KEY: server.apiKey };
    }

    test('without heartbeats, a step slower than the sweep leaves the run crashed until the next line', async () => {
      await compressedServer();
      const config = bandit({}, new WandbPlugin(env, { ...fast, heartbeatMs: 3_600_000 }));
      await train({ ...config, plugins: [...config.plugins!, slowStep(1000)] }, scratch.path('no-heartbeat'));
      expect(server.onlyRun().states).toEqual(['running', 'crashed', 'running', 'finished']);
    });

    test('heartbeats between lines keep a slow step running: empty file_stream requests, no crash', async () => {
      await compressedServer();
      const config = bandit({}, new WandbPlugin(env, fast));
      const runDir = scratch.path('heartbeat');
      await train({ ...config, plugins: [...config.plugins!, slowStep(1000)] }, runDir);
      expect(server.onlyRun().states).toEqual(['running', 'finished']);
      expect(server.fileStreams().filter((body) => Object.keys(body).length === 0).length).toBeGreaterThanOrEqual(5);
      expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));
    });

    test('the last request (lines and exit code) outlasts a long outage at shutdown, as wandb-core retries it for days', async () => {
      await compressedServer();
      const logs: string[] = [];
      const config = bandit({ wandb: { retries: 0 } }, new WandbPlugin(env, fast));
      const runDir = scratch.path('outage-at-end');
      await train({ ...config, plugins: [...config.plugins!, failingAtShutdown(30)] }, runDir, logs);
      await server.injectedFailures(30);
      expect(server.onlyRun().exitcodes).toEqual([0]);
      expect(server.onlyRun().state).toBe('finished');
      expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));
      // A request still in flight from the last step may have warned; nothing was lost.
      expect(logs.filter((l) => l.includes('never reached W&B'))).toEqual([]);
    });

    test('wandb.finishTimeoutMs bounds that wait: past it the run ends with a warning counting what W&B lacks', async () => {
      await compressedServer();
      const logs: string[] = [];
      const config = bandit({ wandb: { retries: 0, finishTimeoutMs: 200 } }, new WandbPlugin(env, fast));
      await train({ ...config, plugins: [...config.plugins!, failingAtShutdown(100_000)] }, scratch.path('down-at-end'), logs);
      expect(server.onlyRun().exitcodes).toEqual([]);
      expect(logs.filter((l) => l.startsWith('warning: wandb:'))[0]).toMatch(/W&B file_stream failed: HTTP 503/);
    });

    test('a 409 Conflict on UpsertBucket is tried again (UpsertBucketRetryPolicy); one on file_stream is final', async () => {
      server.failNext(2, 409, 'UpsertBucket');
      const runDir = scratch.path('conflict');
      await train(bandit(), runDir);
      expect(server.operations()).toEqual(['Viewer', 'UpsertBucket', 'UpsertBucket', 'UpsertBucket']);
      expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));

      server.failNext(1, 409, 'file_stream');
      const logs: string[] = [];
      await train(bandit({ wandb: { retries: 3 } }), scratch.path('conflict-stream'), logs);
      expect(logs.filter((l) => l.startsWith('warning: wandb:'))[0]).toMatch(/W&B file_stream failed: HTTP 409/);
    });

    test("a 429's Retry-After sets the wait, not the plugin's own schedule", async () => {
      // The plugin's own wait before a retry is ten minutes here: only the server's 50 ms lets the run end in time.
      server.failNext(1, 429, 'file_stream', '0.05');
      const runDir = scratch.path('retry-after');
      await train(bandit({}, new WandbPlugin(env, { ...WANDB_TIMING, retryDelayMs: 600_000 })), runDir);
      expect(server.requests.filter((r) => r.body).length).toBeGreaterThanOrEqual(2);
      expect(history(server.onlyRun())).toEqual(expectedHistory(runDir));
      expect(server.onlyRun().exitcodes).toEqual([0]);
    });
  });

  test('no server at setup stops the run before training, naming wandb.baseUrl', async () => {
    await server.stop();
    const runDir = scratch.path('down');
    const error = await failure(train(bandit({ wandb: { retries: 1 } }), runDir));
    expect(DrmasError.is(error) && error.code).toBe('SERVICE_FAILED');
    expect(error).toMatchObject({
      key: 'wandb.baseUrl',
      message: expect.stringMatching(/^W&B Viewer failed: connection failed \(ECONNREFUSED/),
    });
    expect(existsSync(path.join(runDir, 'metrics.jsonl'))).toBe(false);
  });

  test('a key the server refuses is SERVICE_FAILED naming WANDB_API_KEY, not retried', async () => {
    env.WANDB_API_KEY = 'wrong';
    const error = await failure(train(bandit(), scratch.path('refused')));
    expect(error).toMatchObject({
      code: 'SERVICE_FAILED',
      key: 'WANDB_API_KEY',
      message: expect.stringMatching(/^W&B Viewer failed: HTTP 401/),
    });
    expect(server.requests).toHaveLength(1);
  });

  test('a GraphQL error (an entity the key cannot use) stops the run with what the server said', async () => {
    const error = await failure(train(bandit({ wandb: { entity: 'someone-else' } }), scratch.path('entity')));
    expect(error).toMatchObject({
      code: 'SERVICE_FAILED',
      message: expect.stringMatching(/^W&B UpsertBucket failed: entity someone-else not found/),
    });
  });

  test('online without WANDB_API_KEY is a config error at validate, naming the key and wandb.mode', async () => {
    delete env.WANDB_API_KEY;
    const error = await failure(createKernel({ cwd: REPO_ROOT, inline: bandit() }));
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'WANDB_API_KEY' });
    expect((error as DrmasError).hint).toMatch(/wandb\.mode to "disabled"/);
    expect(server.requests).toHaveLength(0);
  });

  test('offline (in the config, or WANDB_MODE=dryrun) is refused at validate; an unknown WANDB_MODE too', async () => {
    const offline = await failure(createKernel({ cwd: REPO_ROOT, inline: bandit({ wandb: { mode: 'offline' } }) }));
    expect(offline).toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'wandb.mode',
      message: expect.stringMatching(/"offline" is not supported/),
    });
    env.WANDB_MODE = 'dryrun';
    expect(await failure(createKernel({ cwd: REPO_ROOT, inline: bandit() }))).toMatchObject({ code: 'CONFIG_INVALID', key: 'wandb.mode' });
    env.WANDB_MODE = 'sometimes';
    expect(await failure(createKernel({ cwd: REPO_ROOT, inline: bandit() }))).toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/^WANDB_MODE "sometimes" is not a W&B mode/),
    });
  });

  test('disabled: no request, no wandb.json, no key needed', async () => {
    delete env.WANDB_API_KEY;
    const runDir = scratch.path('disabled');
    await train(bandit({ wandb: { mode: 'disabled' } }), runDir);
    expect(server.requests).toHaveLength(0);
    expect(existsSync(path.join(runDir, 'wandb.json'))).toBe(false);
    expect(readMetricLines(runDir)).toHaveLength(3);
  });

  test('a resumed run continues the same W&B run after the last history line, with a password in the base URL', async () => {
    const runDir = scratch.path('resumed');
    // wandb.json keeps the URL redacted; the resumed run matches it on the redacted form and sends to the real one
    env.WANDB_BASE_URL = env.WANDB_BASE_URL!.replace('http://', 'http://proxy-user:pr0xy-pass@');
    const small: UserConfig = {
      presets: [mathPreset],
      plugins: [new WandbPlugin(env)],
      rollout: { promptsPerStep: 1, samplesPerPrompt: 2 },
      eval: { atStart: false, atEnd: false },
      report: { html: false, progress: 'off' },
    };
    await train({ ...small, trainer: { steps: 1, seed: 0 } }, runDir);
    const saved = readFileSync(path.join(runDir, 'wandb.json'), 'utf8');
    expect((JSON.parse(saved) as { baseUrl: string }).baseUrl).toBe(env.WANDB_BASE_URL.replace('proxy-user:pr0xy-pass', '***'));
    const first = server.onlyRun().name;
    const { kernel } = await createKernel({ cwd: REPO_ROOT, inline: { ...small, trainer: { steps: 2, seed: 0 } } });
    await kernel.run({ runDir, resume: 'auto', log: () => {} });

    expect(server.operations()).toEqual(['Viewer', 'UpsertBucket', 'UpsertBucket', 'RunResumeStatus']);
    expect(server.requests.filter((r) => r.operation === 'UpsertBucket').map((r) => r.variables!.name)).toEqual([first, first]);
    const run = server.onlyRun();
    expect(history(run)).toEqual(expectedHistory(runDir));
    expect(history(run).map((h) => h._step)).toEqual([1, 2]);
    expect(run.exitcodes).toEqual([0, 0]);
    const resumedLine = server
      .fileStreams()
      .find((s) => s.files?.['wandb-history.jsonl']?.content.some((l) => parseHistoryLine(l)._step === 2));
    expect(resumedLine!.files!['wandb-history.jsonl']!.offset).toBe(1);
  });
});
