// drmas gateway: what micro-batching buys. N concurrent chat completions (the openai wire format over loopback, plain
// fetch) against the gateway over the math preset's base checkpoint, with batching (window 5 ms, up to N rows per
// engine call) and without (one request per engine call), on the same engine.
// usage: npm run build && node bench/gateway.mjs [--rounds 3] [--requests 16] [--tokens 32] [--rollout tfjs|onnx]
// Prints one JSON line per round and a summary of medians.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { createKernel, WorkerGroups } from '@drmas/core';
import { Gateway, GatewayServer, ServedModels } from '@drmas/plugin-gateway';
import { median } from './lib/workloads.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    requests: { type: 'string', default: '16' },
    tokens: { type: 'string', default: '32' },
    rollout: { type: 'string', default: 'tfjs' },
  },
});
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const tokens = Number(values.tokens);
const rollout = values.rollout;

const { kernel } = await createKernel({
  cwd: process.cwd(),
  configPath: 'plugins/gateway/test/fixtures/gateway.config.json',
  overrides: ['plugins=["backend-tfjs","backend-onnx","trainer"]', `models.policy.rollout=${rollout}`],
});
const gateway = await Gateway.open(kernel, { host: '127.0.0.1', port: 0, windowMs: 5, maxBatch: requests, log: () => undefined });
const unbatched = new ServedModels(kernel.get(WorkerGroups).all(), { windowMs: 0, maxBatch: 1 });
const serial = new GatewayServer(unbatched, { host: '127.0.0.1', port: 0 });
const setups = {
  batched: { url: gateway.url, models: gateway.server.models },
  unbatched: { url: await serial.start(), models: unbatched },
};

/** N chat completions at once; each asks for exactly `tokens` tokens (no stop) so both setups sample the same work. */
async function burst(url, round) {
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: requests }, async (_, i) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'solver',
          messages: [{ role: 'user', content: `Solve: ${i + 3 * round}+${17 + i}` }],
          max_tokens: tokens,
          seed: i,
        }),
      });
      return response.json();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const completionTokens = answers.reduce((sum, a) => sum + a.usage.completion_tokens, 0);
  return { seconds, completionTokens };
}

// One warm-up burst each (wasm compilation, first allocations), then alternating rounds.
for (const setup of Object.values(setups)) await burst(setup.url, -1);
const results = { batched: [], unbatched: [] };
for (let round = 0; round < rounds; round++) {
  for (const [name, setup] of Object.entries(setups)) {
    const before = setup.models.generateCalls();
    const { seconds, completionTokens } = await burst(setup.url, round);
    const row = {
      bench: 'gateway',
      setup: name,
      round,
      requests,
      seconds: Number(seconds.toFixed(3)),
      requestsPerSecond: Number((requests / seconds).toFixed(2)),
      tokensPerSecond: Number((completionTokens / seconds).toFixed(1)),
      generateCalls: setup.models.generateCalls() - before,
    };
    results[name].push(row);
    console.log(JSON.stringify(row));
  }
}
await serial.stop();
await gateway.close();

const engine = kernel.config.models.policy.rollout ?? 'tfjs';
console.log(
  `\ngateway, ${requests} concurrent chat completions of ${tokens} tokens, ${engine} engine, ${availableParallelism()} cores, median of ${rounds}:`,
);
for (const [name, rows] of Object.entries(results)) {
  console.log(
    `  ${name.padEnd(9)}  ${median(rows.map((r) => r.requestsPerSecond)).toFixed(2)} requests/s  ` +
      `${median(rows.map((r) => r.tokensPerSecond)).toFixed(1)} tokens/s  ${median(rows.map((r) => r.generateCalls))} engine calls per burst`,
  );
}
const speedup = median(results.batched.map((r) => r.requestsPerSecond)) / median(results.unbatched.map((r) => r.requestsPerSecond));
console.log(`  batching: ${speedup.toFixed(2)}x the requests per second`);
