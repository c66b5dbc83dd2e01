// Seeded fuzzing of the gateway's HTTP surface: valid chat and text completion bodies with fields replaced, removed or
// added, broken JSON, unknown routes and session calls, sent over loopback. Every answer must be a 2xx, or a 4xx in
// OpenAI's error shape naming what is wrong; never a 5xx, a hang or a crash. Quick part: 300 requests (npm test);
// slow part: 3,000 more (DRMAS_SLOW_TESTS=1). The engine is a scripted one (the orchestra's TeacherBackend) on the math
// base checkpoint's tokenizer: what is fuzzed is the request handling, not sampling.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { SeededRng } from '@drmas/core';
import { Tokenizer } from '@drmas/models';
import { TeacherBackend } from '@drmas/plugin-orchestra';
import { GatewayServer, ServedModels } from '@drmas/plugin-gateway';
import { describeSlow } from '../support/describeSlow.js';
import { REPO_ROOT } from '../support/tempProject.js';
import { recordFigures } from './support/figures.js';

const QUICK_CASES = 300;
const SLOW_CASES = 3_000;
const BASE = path.join(REPO_ROOT, 'presets/math/checkpoints/base/policy');

const ODD_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53,
  '',
  'x',
  '∞',
  '\u0000',
  'a'.repeat(5_000),
  [],
  [1, 'x'],
  [[1, 2]],
  {},
  { type: 'text' },
  { role: 'user' },
  [{ role: 'user', content: 'hi' }],
  [{ role: 'user', content: [{ type: 'image_url' }] }],
  [{ type: 'function', function: { name: 'f' } }],
];
const FIELDS = [
  'model',
  'messages',
  'prompt',
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
  'n',
  'stream',
  'stream_options',
  'logprobs',
  'top_logprobs',
  'return_token_ids',
  'tools',
  'tool_choice',
  'frequency_penalty',
  'logit_bias',
  'echo',
  'response_format',
  'unknown_field',
];

interface Tally {
  cases: number;
  passed: number;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  badShape: number;
}
const tally: Tally = { cases: 0, passed: 0, ok: 0, clientErrors: 0, serverErrors: 0, badShape: 0 };
const failures: string[] = [];

let server: GatewayServer;
let url: string;

beforeAll(async () => {
  const read = (file: string) => JSON.parse(readFileSync(path.join(BASE, file), 'utf8')) as never;
  const tokenizer = Tokenizer.fromJSON(read('tokenizer.json'), read('tokenizer_config.json'));
  const engine = new TeacherBackend(tokenizer, () => 'The answer is \\boxed{4}.');
  const models = new ServedModels([{ id: 'policy', agents: ['solver'], trainer: engine, rollout: engine, codec: tokenizer }], {
    windowMs: 1,
    maxBatch: 16,
  });
  server = new GatewayServer(models, { host: '127.0.0.1', port: 0 });
  url = await server.start();
});

afterAll(async () => {
  await server?.stop();
  recordFigures('gateway', [
    {
      area: 'gateway',
      what: 'request fuzz',
      cases: tally.cases,
      passed: tally.passed,
      counts: { '2xx': tally.ok, '4xx': tally.clientErrors, '5xx': tally.serverErrors, 'not OpenAI-shaped': tally.badShape },
    },
  ]);
});

/** One request drawn from the seed: a method, a path and a body (an object, or raw text). */
function draw(rng: SeededRng): { method: string; route: string; body: string } {
  const pick = <T>(items: readonly T[]): T => items[rng.int(items.length)]!;
  const chat = rng.next() < 0.6;
  const body: Record<string, unknown> = chat
    ? { model: pick(['solver', 'policy']), messages: [{ role: 'user', content: 'Solve: 2+2' }], max_tokens: 8 }
    : { model: 'policy', prompt: 'Solve: 2+2', max_tokens: 8 };
  for (let edits = rng.int(4); edits > 0; edits--) {
    const field = pick(FIELDS);
    if (rng.next() < 0.2) delete body[field];
    else body[field] = pick(ODD_VALUES);
  }
  const route =
    rng.next() < 0.9 ? (chat ? '/v1/chat/completions' : '/v1/completions') : pick(['/v1/nothing', '/rl/set_reward', '/v1/models']);
  let text = JSON.stringify(body);
  if (rng.next() < 0.05) text = text.slice(0, rng.int(text.length));
  return { method: route === '/v1/models' ? 'GET' : 'POST', route, body: text };
}

/** Sends one request; answers what is wrong with the answer, or undefined. */
async function check(request: { method: string; route: string; body: string }): Promise<string | undefined> {
  const response = await fetch(`${url}${request.route}`, {
    method: request.method,
    headers: { 'content-type': 'application/json' },
    body: request.method === 'GET' ? undefined : request.body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  tally.cases++;
  if (response.status >= 500) {
    tally.serverErrors++;
    return `${response.status} for ${request.route} ${request.body.slice(0, 300)}: ${text.slice(0, 300)}`;
  }
  if (response.status < 300) {
    tally.ok++;
    return undefined;
  }
  tally.clientErrors++;
  let error: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  if (typeof error?.message !== 'string' || error.message === '' || typeof error.type !== 'string' || !('param' in error)) {
    tally.badShape++;
    return `${response.status} not in OpenAI's error shape for ${request.body.slice(0, 300)}: ${text.slice(0, 300)}`;
  }
  return undefined;
}

async function fuzz(seed: number, cases: number): Promise<void> {
  const rng = new SeededRng(seed);
  for (let i = 0; i < cases; i++) {
    const why = await check(draw(rng));
    if (why) failures.push(why);
    else tally.passed++;
  }
}

describe('gateway request fuzz (quick)', () => {
  test(`${QUICK_CASES} requests: 2xx or an OpenAI-shaped 4xx, never a 5xx`, async () => {
    await fuzz(1, QUICK_CASES);
    expect(failures.slice(0, 5)).toEqual([]);
    // The server still answers.
    expect((await fetch(`${url}/v1/models`)).status).toBe(200);
  });
});

describeSlow('gateway request fuzz (slow)', () => {
  test(`${SLOW_CASES} more requests`, async () => {
    await fuzz(2, SLOW_CASES);
    expect(failures.slice(0, 5)).toEqual([]);
  }, 600_000);
});
