import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { generateText, streamText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import path from 'node:path';
import {
  createKernel,
  scoreSequences,
  WorkerGroups,
  type Kernel,
  type LoraSettings,
  type PolicyBackend,
  type TextCodec,
} from '@drmas/core';
import { initLoraAdapter, loraAdapterFiles, parseModelConfig, SeededRandom } from '@drmas/models';
import { Gateway, GatewayServer, MicroBatcher, ServedModels, type CapturedTurn } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

// The math preset's base checkpoint (a 1.6M-parameter Qwen2 with a tokenizer and a ChatML template), served for the
// agents `solver` and `verifier` on the model `policy`, over loopback to the real clients.
const CONFIG = 'plugins/gateway/test/fixtures/gateway.config.json';
const BASE = 'presets/math/checkpoints/base/policy';
const WINDOW_MS = 2;

let kernel: Kernel;
let gateway: Gateway;
let engine: PolicyBackend;
let codec: TextCodec;
let client: OpenAI;

beforeAll(async () => {
  ({ kernel } = await createKernel({ cwd: process.cwd(), configPath: CONFIG }));
  gateway = await Gateway.open(kernel, { host: '127.0.0.1', port: 0, windowMs: WINDOW_MS, maxBatch: 8, log: () => undefined });
  const served = gateway.server.models.find('policy')!;
  engine = served.engine;
  codec = served.codec!;
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => gateway?.close());

/** The ids the tokenizer's chat template gives one user message (the prompt the gateway must send the engine). */
function chatPromptIds(content: string): number[] {
  return codec.encode(codec.applyChatTemplate!([{ role: 'user', content }], { addGenerationPrompt: true }), { addSpecialTokens: false });
}

/**
 * A completion of 'Solve: 3+4' at temperature 1 with its log-probs, and the same tokens' log-probs by `drmas score` on
 * `models` (model folders): the served figures and each model's.
 */
async function servedAndScored(openai: OpenAI, model: string, maxTokens: number, models: string[]) {
  const answer = (await openai.completions.create({
    model,
    prompt: 'Solve: 3+4',
    max_tokens: maxTokens,
    seed: 5,
    logprobs: 0,
    ...({ return_token_ids: true } as object),
  })) as OpenAI.Completions.Completion & { choices: Array<{ prompt_token_ids: number[]; token_ids: number[] }> };
  const choice = answer.choices[0]!;
  const promptLength = choice.prompt_token_ids.length;
  const ids = [...choice.prompt_token_ids, ...choice.token_ids].join(',');
  const scored: number[][] = [];
  for (const folder of models) {
    const result = await runCli(['score', '--model', folder, '--ids', ids, '--prompt-length', String(promptLength), '--json']);
    expect(result.code).toBe(0);
    scored.push((JSON.parse(result.stdout) as { logprobs: number[] }).logprobs.slice(promptLength));
  }
  return { served: choice.logprobs!.token_logprobs!, tokens: choice.token_ids.length, scored };
}

/** What the engine samples for one prompt alone at a seed: the reference every served answer is held to. */
async function direct(promptIds: number[], seed: number, maxNewTokens: number, stopStrings?: string[]) {
  const result = await engine.generate({ prompts: [promptIds], seed, maxNewTokens, temperature: 1, topP: 1, stopStrings });
  return { tokenIds: result.tokenIds[0]!, logProbs: result.logProbs[0]!, finishReason: result.finishReasons[0]! };
}

/** vLLM's extra fields on a chat completion (`return_token_ids`). */
type WithTokenIds<T> = T & {
  prompt_token_ids?: number[];
  choices: Array<T extends { choices: Array<infer C> } ? C & { token_ids?: number[] } : never>;
};

/** A chat completion at temperature 0.7 asking for `top` alternatives per step, with its prompt and sampled ids. */
async function topLogprobsAnswer(top: number) {
  const content = 'Solve: 30+4';
  const answer = (await client.chat.completions.create({
    model: 'solver',
    messages: [{ role: 'user', content }],
    max_tokens: 3,
    seed: 8,
    temperature: 0.7,
    logprobs: true,
    top_logprobs: top,
    ...({ return_token_ids: true } as object),
  })) as WithTokenIds<OpenAI.Chat.Completions.ChatCompletion>;
  return { entries: answer.choices[0]!.logprobs!.content!, promptIds: chatPromptIds(content), tokenIds: answer.choices[0]!.token_ids! };
}

describe('the openai client over loopback', () => {
  test('a chat completion samples what the engine samples at that seed: ids, text, log-probs', async () => {
    const content = 'Solve: 12+7';
    const want = await direct(chatPromptIds(content), 11, 24);
    const answer = (await client.chat.completions.create({
      model: 'solver',
      messages: [{ role: 'user', content }],
      max_tokens: 24,
      seed: 11,
      logprobs: true,
      // vLLM's extension: the prompt's and the sampled ids.
      ...({ return_token_ids: true } as object),
    })) as WithTokenIds<OpenAI.Chat.Completions.ChatCompletion>;
    const choice = answer.choices[0]!;
    expect(answer.prompt_token_ids).toEqual(chatPromptIds(content));
    expect(choice.token_ids).toEqual(want.tokenIds);
    expect(choice.finish_reason).toBe(want.finishReason);
    expect(choice.message.content).toBe(codec.decode(want.tokenIds, { skipSpecialTokens: true }));
    expect(choice.logprobs!.content!.map((entry) => entry.logprob)).toEqual(want.logProbs);
    expect(answer.usage).toEqual({
      prompt_tokens: answer.prompt_token_ids!.length,
      completion_tokens: want.tokenIds.length,
      total_tokens: answer.prompt_token_ids!.length + want.tokenIds.length,
    });
  });

  test('a model no agent uses is served too, on its own engine: the same checkpoint samples the same ids', async () => {
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['policy', 'spare', 'solver', 'verifier']);
    expect(gateway.server.models.find('spare')!.engine).not.toBe(engine);
    const want = await direct(codec.encode('Solve: 5+6'), 13, 8);
    const answer = (await client.completions.create({
      model: 'spare',
      prompt: 'Solve: 5+6',
      max_tokens: 8,
      seed: 13,
      ...({ return_token_ids: true } as object),
    })) as OpenAI.Completions.Completion & { choices: Array<{ token_ids: number[] }> };
    expect(answer.choices[0]!.token_ids).toEqual(want.tokenIds);
  });

  test("the served log-probs are `drmas score`'s for the same tokens (temperature 1)", async () => {
    const { served, tokens, scored } = await servedAndScored(client, 'policy', 12, [BASE]);
    expect(served).toHaveLength(tokens);
    served.forEach((lp, i) => expect(Math.abs(lp - scored[0]![i]!)).toBeLessThan(1e-4));
  });

  test("top_logprobs: each step's most likely tokens at the sampling temperature, valued as teacher-forced scoring values them", async () => {
    const { entries, promptIds, tokenIds } = await topLogprobsAnswer(3);
    for (const [position, entry] of entries.entries()) {
      const values = entry.top_logprobs.map((t) => t.logprob);
      expect(values).toEqual([...values].sort((a, b) => b - a));
      // The sampled token is one of the alternatives or less likely than all of them.
      const own = entry.top_logprobs.find((t) => t.token === entry.token);
      if (own) expect(own.logprob).toBeCloseTo(entry.logprob, 5);
      else expect(entry.logprob).toBeLessThanOrEqual(values.at(-1)!);
      const prefix = [...promptIds, ...tokenIds.slice(0, position)];
      const ids = entry.top_logprobs.map((t) => codec.encode(t.token, { addSpecialTokens: false }));
      const scored = await scoreSequences(
        engine,
        ids.map(() => prefix),
        ids,
        { temperatures: ids.map(() => 0.7) },
      );
      values.forEach((lp, i) => expect(Math.abs(lp - scored.logProbs[i]![0]!)).toBeLessThan(1e-4));
    }
  });

  test('a streamed chat completion: the deltas join to the text, the chunks carry the sampled ids, then [DONE]', async () => {
    const content = 'Check: 5+5=10';
    const want = await direct(chatPromptIds(content), 3, 20);
    const stream = await client.chat.completions.create({
      model: 'verifier',
      messages: [{ role: 'user', content }],
      max_tokens: 20,
      seed: 3,
      stream: true,
      stream_options: { include_usage: true },
      ...({ return_token_ids: true } as object),
    });
    let text = '';
    const ids: number[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    let promptIds: number[] | undefined;
    for await (const chunk of stream) {
      const extra = chunk as typeof chunk & { prompt_token_ids?: number[]; choices: Array<{ token_ids?: number[] }> };
      promptIds ??= extra.prompt_token_ids;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? '';
        ids.push(...((choice as { token_ids?: number[] }).token_ids ?? []));
        finish = choice.finish_reason ?? finish;
      }
      usage = chunk.usage ?? usage;
    }
    expect(promptIds).toEqual(chatPromptIds(content));
    expect(ids).toEqual(want.tokenIds);
    expect(text).toBe(codec.decode(want.tokenIds, { skipSpecialTokens: true }));
    expect(finish).toBe(want.finishReason);
    expect(usage?.completion_tokens).toBe(want.tokenIds.length);
  });

  test('a stop string ends the text before it; its tokens stay in token_ids', async () => {
    // Greedy from this prompt writes "=" early (found by sampling once); the text must end before it.
    const prompt = 'Solve: 2+3';
    const promptIds = codec.encode(prompt);
    const unstopped = await direct(promptIds, 0, 16);
    const full = codec.decode(unstopped.tokenIds, { skipSpecialTokens: true });
    expect(full).toContain('=');
    const want = await direct(promptIds, 0, 16, ['=']);
    const answer = (await client.completions.create({
      model: 'policy',
      prompt,
      max_tokens: 16,
      seed: 0,
      stop: ['='],
      ...({ return_token_ids: true } as object),
    })) as OpenAI.Completions.Completion & { choices: Array<{ token_ids: number[] }> };
    const choice = answer.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.text).toBe(full.slice(0, full.indexOf('=')));
    expect(choice.token_ids).toEqual(want.tokenIds);
    expect(codec.decode(choice.token_ids)).toContain('=');
  });

  test('concurrent requests with their own seeds share one engine call; each still samples what it would alone', async () => {
    const prompts = ['Solve: 1+1', 'Solve: 20+22', 'Check: 3+3=6', 'Solve: 9+9', 'Solve: 14+5'];
    const wants = await Promise.all(prompts.map((content, i) => direct(chatPromptIds(content), 7 + i, 10)));
    // A server on the same engines whose batch goes when full: one call whatever the machine's load, not a timing.
    const models = new ServedModels(kernel.get(WorkerGroups).all(), { windowMs: 60_000, maxBatch: prompts.length });
    const batching = new GatewayServer(models, { host: '127.0.0.1', port: 0 });
    const batchClient = new OpenAI({ baseURL: `${await batching.start()}/v1`, apiKey: 'unused', maxRetries: 0 });
    const answers = await Promise.all(
      prompts.map(
        (content) =>
          batchClient.chat.completions.create({
            model: 'solver',
            messages: [{ role: 'user', content }],
            max_tokens: 10,
            seed: 7 + prompts.indexOf(content),
            ...({ return_token_ids: true } as object),
          }) as Promise<WithTokenIds<OpenAI.Chat.Completions.ChatCompletion>>,
      ),
    );
    await batching.stop();
    expect(models.generateCalls()).toBe(1);
    answers.forEach((answer, i) => expect(answer.choices[0]!.token_ids).toEqual(wants[i]!.tokenIds));
  });

  test('a full batch goes at once; requests that come during a call go together next, cut to their own max_tokens', async () => {
    const batcher = new MicroBatcher(engine, { windowMs: 60_000, maxBatch: 2 });
    const ask = (content: string, maxNewTokens: number) =>
      batcher.sample({ promptIds: chatPromptIds(content), maxNewTokens, temperature: 1, topP: 1, seed: 9, stopStrings: [] });
    const results = await Promise.all([ask('Solve: 1+2', 8), ask('Solve: 3+4', 8), ask('Solve: 5+6', 3), ask('Solve: 7+8', 8)]);
    expect(batcher.stats).toEqual({ generateCalls: 2, rows: 4, largestCall: 2 });
    const short = await direct(chatPromptIds('Solve: 5+6'), 9, 3);
    expect(results[2]).toEqual({ ...short, topLogProbs: [[], [], []] });
  });

  test('errors are OpenAI-shaped 4xx naming the parameter', async () => {
    const call = (body: Record<string, unknown>) =>
      client.chat.completions.create({ model: 'solver', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, ...body } as never);
    const unknown = await call({ model: 'solvr' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect((unknown as Error).message).toContain('Did you mean "solver"');
    for (const [body, param] of [
      [{ n: 2 }, 'n'],
      [{ temperature: 3 }, 'temperature'],
      [{ top_p: 0 }, 'top_p'],
      [{ max_tokens: 5000 }, 'max_tokens'],
      [{ messages: [] }, 'messages'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
    ] as const) {
      const error = await call(body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param });
    }
    const raw = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', body: '{not json' });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
  });

  test("an idle connection outlives Node's 5 s keep-alive: a client reusing it after 6 s gets an answer on it", async () => {
    // A connection the server closed while the client reused it failed the request (ECONNRESET) in a busy process.
    const agent = new Agent({ keepAlive: true });
    const get = () =>
      new Promise<{ status: number; port: number }>((resolve, reject) => {
        const request = httpGet(`${gateway.url}/v1/models`, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0, port: request.socket!.localPort! }));
        });
        request.on('error', reject);
      });
    try {
      const first = await get();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const second = await get();
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.port).toBe(first.port);
    } finally {
      agent.destroy();
    }
  }, 20_000);
});

describe('the Vercel AI SDK over loopback', () => {
  test('generateText and streamText give the text the engine samples at that seed', async () => {
    const provider = createOpenAICompatible({ name: 'drmas', baseURL: `${gateway.url}/v1` });
    const prompt = 'Solve: 6+2';
    const want = await direct(chatPromptIds(prompt), 21, 16);
    const text = codec.decode(want.tokenIds, { skipSpecialTokens: true });
    const generated = await generateText({ model: provider('solver'), prompt, seed: 21, maxOutputTokens: 16, temperature: 1 });
    expect(generated.text).toBe(text);
    const streamed = streamText({ model: provider('solver'), prompt, seed: 21, maxOutputTokens: 16, temperature: 1 });
    let joined = '';
    for await (const part of streamed.textStream) joined += part;
    expect(joined).toBe(text);
  });
});

describe('capture sessions (AReaL shape)', () => {
  const post = async (path: string, body: unknown = {}) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test("every call is a turn with the engine's ids and log-probs, under its agent; rewards by id or the last", async () => {
    const started = await post('/rl/start_session', { task_id: 'task-7' });
    const sessionId = started.body.session_id as string;
    const session = new OpenAI({ baseURL: `${gateway.url}/${sessionId}/v1`, apiKey: 'unused', maxRetries: 0 });
    const solve = (await session.chat.completions.create({
      model: 'solver',
      messages: [{ role: 'user', content: 'Solve: 8+8' }],
      max_tokens: 12,
      seed: 2,
      logprobs: true,
      ...({ return_token_ids: true } as object),
    })) as WithTokenIds<OpenAI.Chat.Completions.ChatCompletion>;
    // The header form, for a client that cannot change its base URL: agent by header on the model's own name.
    const check = await new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-drmas-session': sessionId, 'x-drmas-agent': 'verifier' },
    }).completions.create({ model: 'policy', prompt: 'Check: 8+8=16', max_tokens: 6, seed: 4, temperature: 0.7 });
    expect((await post(`/${sessionId}/rl/set_reward`, { interaction_id: solve.id, reward: 1 })).status).toBe(200);
    expect((await post(`/${sessionId}/rl/set_reward`, { reward: 0.5 })).status).toBe(200);
    expect((await post(`/${sessionId}/rl/end_session`)).body).toMatchObject({ turns: 2 });
    const late = await session.chat.completions
      .create({ model: 'solver', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ status: 409 });

    const exported = await post('/export_trajectories', { session_id: sessionId });
    expect(exported.body.task_id).toBe('task-7');
    const [first, second] = exported.body.interactions as CapturedTurn[];
    const wantSolve = await direct(chatPromptIds('Solve: 8+8'), 2, 12);
    expect(first).toMatchObject({ id: solve.id, agent: 'solver', modelId: 'policy', reward: 1, temperature: 1 });
    expect(first!.promptIds).toEqual(solve.prompt_token_ids);
    expect(first!.responseIds).toEqual(wantSolve.tokenIds);
    expect(first!.logProbs).toEqual(wantSolve.logProbs);
    const wantCheck = await engine.generate({ prompts: [codec.encode('Check: 8+8=16')], seed: 4, maxNewTokens: 6, temperature: 0.7 });
    expect(second).toMatchObject({
      id: check.id,
      agent: 'verifier',
      model: 'policy',
      reward: 0.5,
      temperature: 0.7,
      text: check.choices[0]!.text,
    });
    expect(second!.responseIds).toEqual(wantCheck.tokenIds[0]);
    expect(second!.logProbs).toEqual(wantCheck.logProbs[0]);
    expect((await post('/export_trajectories', { session_id: sessionId })).status).toBe(404);
  });

  test('session mistakes: unknown session 404, an agent header that is no agent 400, reward not a number 400', async () => {
    expect((await post('/sess-00000000-0000-0000-0000-000000000000/rl/end_session')).status).toBe(404);
    const { body } = await post('/rl/start_session');
    const id = body.session_id as string;
    expect((await post(`/${id}/rl/set_reward`, { reward: 'high' })).body).toMatchObject({ error: { param: 'reward' } });
    expect((await post(`/${id}/rl/set_reward`, { reward: 1 })).status).toBe(400);
    const wrong = await new OpenAI({
      baseURL: `${gateway.url}/${id}/v1`,
      apiKey: 'unused',
      maxRetries: 0,
      defaultHeaders: { 'x-drmas-agent': 'critic' },
    }).completions
      .create({ model: 'policy', prompt: 'x', max_tokens: 2 })
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 400, param: 'x-drmas-agent' });
    expect((await post('/export_trajectories', { session_id: id })).status).toBe(409);
  });

  test('a session untouched for the idle time is freed with its turns; one in use is kept', async () => {
    const idle = new GatewayServer(gateway.server.models, { host: '127.0.0.1', port: 0, sessionIdleMs: 600 });
    const url = await idle.start();
    const call = async (path: string, body: unknown = {}) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as { session_id?: string; error?: { message: string } } };
    };
    try {
      const abandoned = (await call('/rl/start_session')).body.session_id!;
      const active = (await call('/rl/start_session')).body.session_id!;
      await new Promise((resolve) => setTimeout(resolve, 400));
      const client = new OpenAI({ baseURL: `${url}/${active}/v1`, apiKey: 'unused', maxRetries: 0 });
      await client.completions.create({ model: 'solver', prompt: [5, 6, 7], max_tokens: 2 });
      await new Promise((resolve) => setTimeout(resolve, 400));
      // 800 ms since the abandoned one was touched, 400 ms since the active one's call ended.
      expect((await call(`/${active}/rl/set_reward`, { reward: 1 })).status).toBe(200);
      const gone = await call(`/${abandoned}/rl/end_session`);
      expect(gone.status).toBe(404);
      expect(gone.body.error!.message).toContain('freed after 600 ms idle');
      expect(idle.sessions.expired).toBe(1);
      expect(idle.sessions.size).toBe(1);
      expect((await call(`/${active}/rl/end_session`)).body).toMatchObject({ turns: 1 });
    } finally {
      await idle.stop();
    }
  });
});

describe('drmas gateway', () => {
  test('bad flags are refused before anything loads, naming the flag', async () => {
    const port = await runCli(['gateway', '--config', CONFIG, '--port', '70000']);
    expect(port.code).toBe(1);
    expect(port.stderr).toContain('error INVALID_ARGUMENT (--port)');
    const batch = await runCli(['gateway', '--config', CONFIG, '--max-batch', '0']);
    expect(batch.stderr).toContain('(--max-batch)');
    const idle = await runCli(['gateway', '--config', CONFIG, '--session-idle-s', '0']);
    expect(idle.stderr).toContain('(--session-idle-s)');
  });

  test('a LoRA agent without a trained adapter is refused before anything loads, naming its lora key, lora.adapter and drmas export --merge-lora', async () => {
    const result = await runCli(['gateway', '--config', 'plugins/gateway/test/fixtures/gateway-lora.config.json', '--port', '0']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error CONFIG_INVALID (agents.solver.lora): drmas gateway would serve agent "solver"'s LoRA adapter untrained`,
    );
    expect(result.stderr).toContain('drmas export --merge-lora');
    expect(result.stderr).toContain('agents.solver.lora.adapter (<run>/checkpoints/step-N/policy@solver)');
    expect(result.stderr).not.toContain('LoRA r=4');
  });
});

describe('a LoRA agent with a trained adapter (agents.<role>.lora.adapter)', () => {
  const project = new TempProject('gateway-lora');
  afterAll(() => project.dispose());

  test('is served with its adapter: the log-probs are those of the adapter merged into the base, not the base', async () => {
    // A trained adapter: PEFT's layout, B random (PEFT's zero B would serve the base), beside the base's config and tokenizer.
    const settings: LoraSettings = { rank: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj'] };
    const configJson = JSON.parse(readFileSync(path.join(BASE, 'config.json'), 'utf8')) as Record<string, unknown>;
    const adapter = initLoraAdapter(parseModelConfig(configJson), settings, new SeededRandom(3));
    const rng = new SeededRandom(4);
    for (const [name, t] of adapter)
      if (name.endsWith('lora_B.weight')) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.normal() * 0.2;
    const folder = project.path('adapter');
    for (const [file, data] of Object.entries(loraAdapterFiles(folder, settings, adapter))) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, data);
    }
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json'])
      copyFileSync(path.join(BASE, file), path.join(folder, file));
    const merged = project.path('merged');
    expect((await runCli(['export', '--merge-lora', folder, '--base', BASE, '--out', merged])).code).toBe(0);

    const { kernel: loraKernel } = await createKernel({
      cwd: process.cwd(),
      configPath: 'plugins/gateway/test/fixtures/gateway-lora.config.json',
      overrides: [`agents.solver.lora.adapter=${folder}`],
    });
    const served = await Gateway.open(loraKernel, { host: '127.0.0.1', port: 0, windowMs: WINDOW_MS, maxBatch: 8, log: () => undefined });
    try {
      const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const { served: logprobs, scored } = await servedAndScored(openai, 'solver', 8, [merged, BASE]);
      const [withAdapter, base] = scored as [number[], number[]];
      logprobs.forEach((lp, i) => expect(Math.abs(lp - withAdapter[i]!)).toBeLessThan(1e-4));
      expect(Math.max(...logprobs.map((lp, i) => Math.abs(lp - base[i]!)))).toBeGreaterThan(1e-2);
    } finally {
      await served.close();
    }
  });
});

describeSlow('top_logprobs against the whole vocabulary', () => {
  test('the alternatives are the most likely tokens of the step, as scoring every token of the vocabulary ranks them', async () => {
    const { entries, promptIds } = await topLogprobsAnswer(3);
    const vocab = Array.from({ length: engine.vocabSize }, (_, id) => id);
    const { logProbs } = await scoreSequences(
      engine,
      vocab.map(() => promptIds),
      vocab.map((id) => [id]),
      { temperatures: vocab.map(() => 0.7) },
    );
    const ranked = vocab.map((id) => ({ id, lp: logProbs[id]![0]! })).sort((a, b) => b.lp - a.lp || a.id - b.id);
    expect(entries[0]!.top_logprobs.map((t) => t.token)).toEqual(ranked.slice(0, 3).map((r) => codec.decode([r.id])));
  });
});
