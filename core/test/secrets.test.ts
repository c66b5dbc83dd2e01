import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  ConfigSecrets,
  createKernel,
  DrmasError,
  fetchText,
  redactUrl,
  redactUrlsInText,
  redactValue,
  resolveConfig,
  secret,
  secretEnvName,
  secretKindOf,
  secretLeaves,
  secretUrl,
  urlCredentials,
  z,
  type CliCommand,
  type Plugin,
} from '../src/index.js';
import { runCli } from '../../test/support/cliRunner.js';
import { TempProject } from '../../test/support/tempProject.js';
import { kernelConfig } from './kernelConfig.js';

const scratch = new TempProject('secrets');
afterAll(() => scratch.dispose());

describe('redactUrl', () => {
  test('hides the user info and keeps scheme, host, port, path and query', () => {
    expect(redactUrl('redis://:hunter2@cache:6379/0')).toBe('redis://***@cache:6379/0');
    expect(redactUrl('https://ana:pa%40ss@mlflow.example.com:5000/base?x=1#top')).toBe('https://***@mlflow.example.com:5000/base?x=1#top');
    expect(redactUrl('https://ghp_token123@host/')).toBe('https://***@host/');
  });

  test('hides the values of credential query parameters only', () => {
    expect(redactUrl('https://host/api?token=abc&page=2')).toBe('https://host/api?token=***&page=2');
    expect(redactUrl('https://b.s3.example/k?X-Amz-Credential=AKIA%2F1&X-Amz-Date=1&X-Amz-Signature=ff')).toBe(
      'https://b.s3.example/k?X-Amz-Credential=***&X-Amz-Date=1&X-Amz-Signature=***',
    );
    expect(redactUrl('redis://h:6379?password=pw&db=2')).toBe('redis://h:6379?password=***&db=2');
  });

  test('a URL without credentials, and host:port, come back unchanged', () => {
    for (const url of ['http://127.0.0.1:5000', 'https://api.wandb.ai', '127.0.0.1:50051', 'http://h/a@b?q=1', 'tiny']) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  test('a value that is not a valid URL still loses what looks like its user info', () => {
    expect(redactUrl('redis//:pw@host')).toBe('***@host');
    expect(redactUrl('user:pw@host:1')).toBe('***@host:1');
    // an unencoded / in the password makes it no URL at all
    expect(redactUrl('redis://:pa/ss@host:6379')).toBe('redis://***@host:6379');
  });
});

describe('urlCredentials', () => {
  test('the password (raw and decoded) and the whole user info; a lone user name is a token', () => {
    expect(urlCredentials('https://ana:pa%40ss@h/')).toEqual(['ana:pa%40ss', 'ana:pa@ss', 'pa%40ss', 'pa@ss']);
    expect(urlCredentials('https://tok3n@h/')).toEqual(['tok3n']);
    expect(urlCredentials('https://h/?api_key=k1&x=2')).toEqual(['k1']);
    expect(urlCredentials('http://h:1')).toEqual([]);
  });
});

describe('redactUrlsInText', () => {
  test('finds URLs with user info or credential parameters inside a message', () => {
    expect(redactUrlsInText('Redis at redis://default:hunter2@cache:6379 is unreachable: ECONNREFUSED')).toBe(
      'Redis at redis://***@cache:6379 is unreachable: ECONNREFUSED',
    );
    expect(redactUrlsInText('GET "https://h/x?access_token=abc&n=1" failed')).toBe('GET "https://h/x?access_token=***&n=1" failed');
    expect(redactUrlsInText('no url here, a=b and x@y')).toBe('no url here, a=b and x@y');
  });
});

/** A plugin section with one key of each secret kind, in a record and a list as well. */
const vaultSection = z.strictObject({
  token: secret().optional(),
  url: secretUrl({ protocol: /^https?$/ }).optional(),
  keyEnv: secretEnvName().default('VAULT_KEY'),
  mirrors: z.array(z.string().meta({ secret: 'url' })).optional(),
  plain: z.string().optional(),
});
const vaultPlugin = (extra: Partial<Plugin> = {}): Plugin => ({
  name: 'vault',
  configSchema: { vault: vaultSection },
  apply() {},
  ...extra,
});

describe('schema marks', () => {
  test('secret(), secretUrl() and secretEnvName() are seen through optional and default', () => {
    expect(secretKindOf(secret().optional())).toBe('value');
    expect(secretKindOf(secretUrl().default('http://h'))).toBe('url');
    expect(secretKindOf(secretEnvName().default('X'))).toBe('env');
    expect(secretKindOf(z.string().regex(/^a/).meta({ secret: 'url' }).default('a'))).toBe('url');
    expect(secretKindOf(z.string())).toBeUndefined();
  });

  test('secretLeaves walks records, unions and lists; redactValue copies and leaves the input alone', () => {
    const schema = z.strictObject({
      models: z.record(
        z.string(),
        z.strictObject({ rollout: z.union([z.string(), z.strictObject({ kind: z.string(), url: secretUrl() })]).optional() }),
      ),
      vault: vaultSection,
    });
    const config = {
      models: { a: { rollout: 'onnx' }, b: { rollout: { kind: 'vllm', url: 'http://u:pw1234@gpu:8000' } } },
      vault: { token: 'tok-5678', keyEnv: 'VAULT_KEY', mirrors: ['http://m1', 'https://x:pw9999@m2/'], plain: 'http://y:notmarked@h' },
    };
    expect(secretLeaves(schema, config).map((leaf) => [leaf.path.join('.'), leaf.kind])).toEqual([
      ['models.b.rollout.url', 'url'],
      ['vault.token', 'value'],
      ['vault.keyEnv', 'env'],
      ['vault.mirrors.0', 'url'],
      ['vault.mirrors.1', 'url'],
    ]);
    const before = JSON.stringify(config);
    const redacted = redactValue(schema, config);
    expect(JSON.stringify(config)).toBe(before);
    expect(redacted).toEqual({
      models: { a: { rollout: 'onnx' }, b: { rollout: { kind: 'vllm', url: 'http://***@gpu:8000' } } },
      vault: { token: '***', keyEnv: 'VAULT_KEY', mirrors: ['http://m1', 'https://***@m2/'], plain: 'http://y:notmarked@h' },
    });
    const clean = { models: {}, vault: { keyEnv: 'K' } };
    expect(redactValue(schema, clean)).toBe(clean);
  });
});

describe('ConfigSecrets', () => {
  const schema = z.strictObject({ vault: vaultSection });
  const secrets = (vault: object, env: Record<string, string> = {}, secretEnv = {}) =>
    new ConfigSecrets(schema, () => ({ ...kernelConfig(1), vault }), secretEnv, env);

  test('redacts every credential the config and the environment hold, wherever a message quotes it', () => {
    const known = secrets(
      { token: 'tok-5678', url: 'https://ana:pa%40ss99@vault.example', keyEnv: 'VAULT_KEY' },
      { VAULT_KEY: 'env-key-42', SERVICE_TOKEN: 'svc"tok\\en', OTHER: 'not-a-secret' },
      { SERVICE_TOKEN: 'value' },
    );
    expect(known.redact('sent tok-5678 to vault.example as ana with pa@ss99 (pa%40ss99), key env-key-42; not-a-secret')).toBe(
      'sent *** to vault.example as ana with *** (***), key ***; not-a-secret',
    );
    // as JSON quotes it
    expect(known.redact(JSON.stringify({ t: 'svc"tok\\en' }))).toBe('{"t":"***"}');
    expect(known.config()).toMatchObject({ vault: { token: '***', url: 'https://***@vault.example', keyEnv: 'VAULT_KEY' } });
  });

  test('credentials of fewer than 4 characters are left in text (they are still redacted in the config)', () => {
    const short = secrets({ token: 'abc' });
    expect(short.redact('abc')).toBe('abc');
    expect(short.config()).toMatchObject({ vault: { token: '***' } });
  });

  test('redactError: the same error when it quotes nothing; else message, hint, file and causes redacted', () => {
    const known = secrets({ token: 'tok-5678' });
    const clean = new DrmasError('SERVICE_FAILED', 'down', { key: 'vault.url' });
    expect(known.redactError(clean)).toBe(clean);
    const cause = new Error('header was tok-5678');
    const leaky = new DrmasError('SERVICE_FAILED', 'token tok-5678 refused', { key: 'vault.token', hint: 'renew tok-5678', cause });
    const redacted = known.redactError(leaky) as DrmasError;
    expect(DrmasError.is(redacted)).toBe(true);
    expect([redacted.code, redacted.key, redacted.message, redacted.hint]).toEqual([
      'SERVICE_FAILED',
      'vault.token',
      'token *** refused',
      'renew ***',
    ]);
    expect((redacted.cause as Error).message).toBe('header was ***');
    expect(redacted.stack).not.toContain('tok-5678');
    expect((known.redactError(new TypeError('at https://u:pw-1234@h')) as Error).message).toBe('at https://***@h');
  });
});

describe('a kernel keeps its secrets', () => {
  const URL_SECRET = 'url-pass-1111';
  const TOKEN = 'token-2222';
  const inline = (plugin: Plugin) => ({
    plugins: [plugin],
    trainer: { steps: 0 },
    vault: { token: TOKEN, url: `https://svc:${URL_SECRET}@vault.example/v1`, mirrors: [`http://m:${URL_SECRET}@mirror`] },
  });
  afterEach(() => {
    delete process.env.VAULT_KEY;
  });

  test('config.json holds the redacted config; run.log lines lose every credential', async () => {
    process.env.VAULT_KEY = 'env-key-3333';
    const logs: string[] = [];
    const chatty = vaultPlugin({
      secretEnv: { VAULT_KEY: 'value' },
      apply(kernel) {
        kernel.hooks.setup.tapPromise('vault', async (run) => {
          const { url, token } = kernel.config.vault as { url: string; token: string };
          run.log(`connecting to ${url} with ${token} and ${process.env.VAULT_KEY}`);
        });
      },
    });
    const { kernel } = await createKernel({ cwd: scratch.dir, inline: inline(chatty) });
    const runDir = scratch.path('kept');
    await kernel.run({ runDir, log: (m) => logs.push(m) });
    const written = readFileSync(path.join(runDir, 'config.json'), 'utf8');
    expect((JSON.parse(written) as { vault: unknown }).vault).toEqual({
      token: '***',
      url: 'https://***@vault.example/v1',
      mirrors: ['http://***@mirror'],
      keyEnv: 'VAULT_KEY',
    });
    expect(logs).toContain('connecting to https://***@vault.example/v1 with *** and ***');
    for (const text of [written, ...logs]) {
      for (const value of [URL_SECRET, TOKEN, 'env-key-3333']) expect(text).not.toContain(value);
    }
    // the kernel itself still reads the real values
    expect((kernel.config.vault as { token: string }).token).toBe(TOKEN);
  });

  test('an error a plugin throws while setting up quotes no credential', async () => {
    const failing = vaultPlugin({
      apply(kernel) {
        kernel.hooks.setup.tapPromise('vault', async () => {
          const { url } = kernel.config.vault as { url: string };
          throw new DrmasError('SERVICE_FAILED', `no answer from ${url}`, { key: 'vault.url', hint: `check ${url}` });
        });
      },
    });
    const { kernel } = await createKernel({ cwd: scratch.dir, inline: inline(failing) });
    const error = await kernel.run({ runDir: scratch.path('failing'), log: () => {} }).catch((e: unknown) => e);
    expect(DrmasError.is(error)).toBe(true);
    expect((error as DrmasError).format()).toContain('no answer from https://***@vault.example/v1');
    expect(`${(error as DrmasError).format()}\n${(error as Error).stack}`).not.toContain(URL_SECRET);
  });

  test('a config error quotes a secret key redacted, and so does the --set that set it', async () => {
    const error = await resolveConfig({
      cwd: scratch.dir,
      inline: { plugins: [vaultPlugin()] },
      overrides: [`vault.url=ftp://svc:${URL_SECRET}@vault.example`, `vault.token=${TOKEN}`, 'vault.plain=7'],
    }).catch((e: unknown) => e);
    const text = (error as DrmasError).format();
    expect(text).toContain('--set vault.url=ftp://***@vault.example');
    expect(text).not.toContain(URL_SECRET);
    const typo = await resolveConfig({
      cwd: scratch.dir,
      inline: { plugins: [vaultPlugin()], vault: { token: 42, url: `https//svc:${URL_SECRET}@vault.example` } },
    }).catch((e: unknown) => e);
    expect((typo as DrmasError).format()).not.toContain(URL_SECRET);
  });

  test('the CLI prints an error with a URL password redacted, whatever threw it', async () => {
    const command: CliCommand = {
      name: 'leak',
      summary: 'throws',
      usage: 'drmas leak',
      help: [],
      options: {},
      run: () => Promise.reject(new Error(`connect failed: redis://:${URL_SECRET}@cache:6379`)),
    };
    for (const args of [['leak'], ['leak', '--verbose']]) {
      const { code, stderr } = await runCli(args, scratch.dir, [command]);
      expect(code).toBe(70);
      expect(stderr).toContain('redis://***@cache:6379');
      expect(stderr).not.toContain(URL_SECRET);
    }
  });
});

describe('fetchText with user info in the URL', () => {
  let server: Server;
  let port: number;
  const seen: Array<{ url: string | undefined; headers: IncomingHttpHeaders }> = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ url: request.url, headers: request.headers });
      response.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('sends it as basic auth, percent-decoded, and never in the request', async () => {
    const answer = await fetchText(`http://ana:pa%40ss@127.0.0.1:${port}/api?x=1`, { method: 'GET', timeoutMs: 5000 });
    expect(answer).toEqual({ status: 200, text: '{}' });
    const last = seen.at(-1)!;
    expect(last.url).toBe('/api?x=1');
    // base64 of "ana:pa@ss", worked by hand: YW5h Onbh QHNz
    expect(last.headers.authorization).toBe('Basic YW5hOnBhQHNz');
  });

  test("a client's own authorization header wins over the URL's", async () => {
    await fetchText(`http://ana:pw@127.0.0.1:${port}/`, { method: 'GET', timeoutMs: 5000, headers: { Authorization: 'Bearer t' } });
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer t');
  });
});
