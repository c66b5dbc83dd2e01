import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { resolveConfig, secretKindOf } from '@drmas/core';
import { MlflowStandIn } from '../plugins/mlflow/test/mlflowStandIn.js';
import { WandbStandIn } from '../plugins/wandb/test/wandbStandIn.js';
import { runCli, type CliResult } from './support/cliRunner.js';
import { RecordingProxy } from './support/recordingProxy.js';
import { freePort } from './support/redisServer.js';
import { schemaNodes } from './support/schemaNodes.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';
import { workspacePlugins } from './support/workspacePlugins.js';

/**
 * One distinct credential per marked key and per environment variable the plugins read one from: each must be found
 * nowhere the run writes, sends or prints.
 */
const SECRET = {
  mlflowUrl: 'pw-mlflow-url-4f1c',
  wandbUrl: 'pw-wandb-url-8a2e',
  redisFile: 'pw-redis-file-13b7',
  redisSet: 'pw-redis-set-6d90',
  retriever: 'pw-retriever-2c55',
  rolloutUrl: 'pw-vllm-url-71e3',
  rolloutQuery: 'tok-vllm-query-5b08',
  tinkerUrl: 'pw-tinker-url-0f4a',
  configError: 'pw-config-error-9e61',
  fileError: 'pw-file-error-3a7d',
  refused: 'pw-refused-c420',
  WANDB_API_KEY: 'wandb-api-key-0123456789abcdef0123456789',
  MLFLOW_TRACKING_TOKEN: 'mlflow-token-5e6f7a8b',
  MLFLOW_TRACKING_PASSWORD: 'mlflow-password-1d2c',
  MLFLOW_TRACKING_URI: 'pw-mlflow-env-uri-77aa',
  WANDB_BASE_URL: 'pw-wandb-env-url-33cc',
  TINKER_API_KEY: 'tinker-api-key-ab12cd34',
} as const;

const ENV = {
  WANDB_API_KEY: SECRET.WANDB_API_KEY,
  MLFLOW_TRACKING_TOKEN: SECRET.MLFLOW_TRACKING_TOKEN,
  MLFLOW_TRACKING_USERNAME: 'ana',
  MLFLOW_TRACKING_PASSWORD: SECRET.MLFLOW_TRACKING_PASSWORD,
  // The config's keys win over these; they must stay unsaid all the same.
  MLFLOW_TRACKING_URI: `http://ana:${SECRET.MLFLOW_TRACKING_URI}@127.0.0.1:9`,
  WANDB_BASE_URL: `http://ana:${SECRET.WANDB_BASE_URL}@127.0.0.1:9`,
  TINKER_API_KEY: SECRET.TINKER_API_KEY,
};

const project = new TempProject('secrets');
const mlflow = new MlflowStandIn(SECRET.MLFLOW_TRACKING_TOKEN);
const wandb = new WandbStandIn(SECRET.WANDB_API_KEY);
let mlflowProxy: RecordingProxy;
let wandbProxy: RecordingProxy;
/** Every CLI call's standard output and error. */
const printed: CliResult[] = [];
let closedPort: number;
const savedEnv = { ...process.env };

/** Runs the CLI in this process; what it prints, to its own streams or straight to the process's, is kept. */
async function cli(...args: string[]): Promise<CliResult> {
  const direct: string[] = [];
  const keep = (chunk: unknown) => direct.push(String(chunk)) > 0;
  const spies = [
    jest.spyOn(process.stdout, 'write').mockImplementation(keep),
    jest.spyOn(process.stderr, 'write').mockImplementation(keep),
  ];
  try {
    const result = await runCli(args, project.dir);
    printed.push({ ...result, stderr: `${result.stderr}${direct.join('')}` });
    return result;
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

/** Every file under `dir`, as bytes read as latin1 (an ASCII secret shows in any file, binary ones too). */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [{ file, text: readFileSync(file).toString('latin1') }];
  });
}

beforeAll(async () => {
  Object.assign(process.env, ENV);
  mlflowProxy = new RecordingProxy(await mlflow.start());
  wandbProxy = new RecordingProxy(await wandb.start());
  const mlflowAt = (await mlflowProxy.start()).replace('http://', `http://ana:${SECRET.mlflowUrl}@`);
  const wandbAt = (await wandbProxy.start()).replace('http://', `http://ana:${SECRET.wandbUrl}@`);
  closedPort = await freePort();
  project.write({
    'drmas.config.json': {
      plugins: [
        ['bandit', { arms: 4, agents: ['proposer', 'checker'], groups: 2, samplesPerGroup: 4 }],
        'mlflow',
        'wandb',
        'tensorboard',
        'report',
        'rollout-bullmq',
        'env-search',
        'backend-tinker',
      ],
      trainer: { steps: 2, seed: 7 },
      report: { progress: 'off' },
      mlflow: { trackingUri: mlflowAt, retries: 0 },
      wandb: { baseUrl: wandbAt },
      bullmq: { redisUrl: `redis://:${SECRET.redisFile}@127.0.0.1:6390/0` },
      env: { retriever: { urls: [`http://search:${SECRET.retriever}@127.0.0.1:9/retrieve`] } },
      models: {
        spare: {
          model: 'tiny',
          rollout: { kind: 'vllm', url: `http://gpu:${SECRET.rolloutUrl}@127.0.0.1:9?access_token=${SECRET.rolloutQuery}` },
          tinker: { baseUrl: `http://t:${SECRET.tinkerUrl}@127.0.0.1:9` },
        },
      },
    },
    'bad.config.json': {
      plugins: ['wandb'],
      wandb: { baseUrl: `ftp://ana:${SECRET.fileError}@wandb.example` },
    },
  });
}, 30_000);

afterAll(async () => {
  process.env = savedEnv;
  await Promise.all([mlflowProxy.stop(), wandbProxy.stop(), mlflow.stop(), wandb.stop()]);
  project.dispose();
});

describe('secrets in every marked key and every credential variable reach no file, server or terminal', () => {
  const runDir = () => project.path('runs', 'kept');

  test('a run with every sink, drmas info, and the errors a user meets', async () => {
    const setRedis = `bullmq.redisUrl=redis://:${SECRET.redisSet}@127.0.0.1:6390/0`;
    expect((await cli('train', '--run-dir', runDir(), '--set', setRedis)).code).toBe(0);
    expect((await cli('info', '--set', setRedis)).code).toBe(0);
    expect((await cli('info', '--json')).code).toBe(0);
    const badSet = await cli('train', '--set', `mlflow.trackingUri=ftp://ana:${SECRET.configError}@mlflow.example`);
    expect(badSet.stderr).toContain(
      `error CONFIG_OVERRIDE_INVALID (--set mlflow.trackingUri=ftp://***@mlflow.example: mlflow.trackingUri)`,
    );
    const badFile = await cli('train', '--config', 'bad.config.json');
    expect(badFile.stderr).toContain('error CONFIG_INVALID');
    expect(badFile.stderr).toContain('ftp://***@wandb.example');
    const refused = await cli(
      'train',
      '--run-dir',
      project.path('runs', 'refused'),
      '--set',
      `mlflow.trackingUri=http://ana:${SECRET.refused}@127.0.0.1:${closedPort}`,
      '--set',
      'wandb.mode=disabled',
    );
    expect(refused.stderr).toContain('error SERVICE_FAILED');

    // What was meant to happen did: the trackers got the run, with the credentials where they belong (headers).
    expect(mlflow.runs.size).toBe(1);
    expect([...mlflow.runs.values()][0]!.statuses).toEqual(['FINISHED']);
    expect(wandb.runs.size).toBe(1);
    expect(existsSync(path.join(runDir(), 'report.html'))).toBe(true);
    const params = [...mlflow.runs.values()][0]!.params;
    expect(params.get('bullmq.redisUrl')).toBe('redis://***@127.0.0.1:6390/0');
    expect(params.get('models.spare.rollout.url')).toBe('http://***@127.0.0.1:9?access_token=***');
    const upsert = wandb.requests.find((r) => r.operation === 'UpsertBucket')!.variables!;
    const sent = JSON.parse(upsert.config as string) as { env: { value: { retriever: { urls: string[] } } } };
    expect(sent.env.value.retriever.urls).toEqual(['http://***@127.0.0.1:9/retrieve']);
    const config = JSON.parse(readFileSync(path.join(runDir(), 'config.json'), 'utf8')) as { mlflow: { trackingUri: string } };
    expect(config.mlflow.trackingUri).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+$/);
    expect(readFileSync(path.join(runDir(), 'report.html'), 'utf8')).toContain('redis://***@127.0.0.1:6390/0');

    const searched = [
      ...filesUnder(project.path('runs')).map(({ file, text }) => ({ where: file, text })),
      ...[...mlflowProxy.requests, ...wandbProxy.requests].map((r) => ({ where: `${r.method} ${r.url}`, text: `${r.url}\n${r.body}` })),
      ...printed.map((p, i) => ({ where: `command ${i + 1}`, text: `${p.stdout}\n${p.stderr}` })),
    ];
    expect(searched.length).toBeGreaterThan(20);
    const found = searched.flatMap(({ where, text }) =>
      Object.entries(SECRET).flatMap(([name, value]) => (text.includes(value) ? [`${name} in ${where}`] : [])),
    );
    expect(found).toEqual([]);
  }, 120_000);
});

/** The keys that hold a credential, by kind: a dropped mark fails here. */
const MARKED: Record<string, string> = {
  'bullmq.redisUrl': 'url',
  'env.remote.urls[]': 'url',
  'env.retriever.urls[]': 'url',
  'mlflow.trackingUri': 'url',
  'models.<name>.rollout.apiKeyEnv': 'env',
  'models.<name>.rollout.url': 'url',
  'models.<name>.tinker.apiKeyEnv': 'env',
  'models.<name>.tinker.baseUrl': 'url',
  'wandb.baseUrl': 'url',
};

/** Keys whose name suggests a credential and which hold none, each with what it holds. */
const CHECKED_NOT_SECRET: Record<string, string> = {
  'algorithm.groupKey': 'the name of a row grouping (an enum)',
  'agents.<name>.advantageOptions.groupKey': 'the name of a row grouping (an enum)',
  'agents.<name>.sampling.maxNewTokens': 'a count of tokens',
  'agents.<name>.train.microBatchTokens': 'a count of tokens per micro-batch',
  'orchestra.graph.agents.<name>.sampling.maxNewTokens': 'a count of tokens',
};

const CONTAINERS = new Set(['object', 'array', 'record', 'tuple']);
const CREDENTIAL_WORDS = /url|uri|key|token|password|passwd|secret|auth|credential/i;

describe('every key that can hold a credential is marked', () => {
  test('the kernel and every plugin: a key named or described like a credential is marked, or listed as holding none', async () => {
    const { schema } = await resolveConfig({ cwd: REPO_ROOT, inline: { plugins: workspacePlugins() } });
    const all = schemaNodes(schema).filter((node) => !CONTAINERS.has(node.type));
    const marked = Object.fromEntries(
      all.flatMap((node) => (secretKindOf(node.declared) ? [[node.path, secretKindOf(node.declared)!]] : [])),
    );
    expect(marked).toEqual(MARKED);
    const suspicious = [
      ...new Set(all.filter((l) => CREDENTIAL_WORDS.test(`${l.path.split('.').pop()} ${l.declared.description ?? ''}`)).map((l) => l.path)),
    ];
    expect(suspicious.filter((key) => !(key in MARKED) && !(key in CHECKED_NOT_SECRET))).toEqual([]);
    // the lists name keys that exist
    expect(Object.keys(CHECKED_NOT_SECRET).filter((key) => !suspicious.includes(key))).toEqual([]);
  });
});
