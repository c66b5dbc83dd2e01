// drmas serve: what a round costs over gRPC. One rollout's environment work of the math preset
// (8 prompts x 4 samples: fetch the tasks, reset 32 episodes, step them with answers) on the local environment, and
// through the remote environment against one and two in-process servers on loopback (the same gRPC stack a
// separate process uses, without a second process's scheduling noise).
// usage: npm run build && node bench/envServer.mjs [--rounds 20] [--prompts 8] [--samples 4]
// Prints one JSON line per setup and a summary of medians in milliseconds.
import { parseArgs } from 'node:util';
import { MathEnvironment } from '@drmas/plugin-env-math';
import { EnvironmentServer, RemoteEnvironment } from '@drmas/plugin-env-remote';
import { median } from './lib/workloads.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    prompts: { type: 'string', default: '8' },
    samples: { type: 'string', default: '4' },
  },
});
const rounds = Number(values.rounds);
const prompts = Number(values.prompts);
const samples = Number(values.samples);
const settings = { seed: 0, levels: [1, 2], testSize: 64, checkSteps: true };

async function server() {
  const environment = new MathEnvironment(settings);
  await environment.init();
  return EnvironmentServer.start({
    environments: new Map([['math', { environment, plugin: 'env-math' }]]),
    host: '127.0.0.1',
    port: 0,
    idleTimeoutMs: 60_000,
    maxSessions: 100_000,
  });
}

/** One rollout's environment work; milliseconds. */
async function rollout(environment, round) {
  const started = performance.now();
  await environment.prepare?.(round * prompts, prompts);
  const { tasks } = environment.batch(round * prompts, prompts);
  const episodes = tasks.flatMap((task) => Array.from({ length: samples }, () => environment.reset(task)));
  await environment.advance(
    episodes,
    episodes.map((e, i) => ({
      type: 'answer',
      content: i % 2 ? 'so \\boxed{0}' : `so \\boxed{${e.variables().question.length}}`,
      turnIndex: 0,
    })),
  );
  return performance.now() - started;
}

const servers = [await server(), await server()];
const local = new MathEnvironment(settings);
await local.init();
const setups = {
  local,
  'remote, 1 server': new RemoteEnvironment({ remote: { urls: [servers[0].address] } }),
  'remote, 2 servers': new RemoteEnvironment({ remote: { urls: servers.map((s) => s.address) } }),
};
const summary = {};
for (const [name, environment] of Object.entries(setups)) {
  await environment.init();
  await rollout(environment, rounds); // warm-up: connections, JIT
  const times = [];
  for (let round = 0; round < rounds; round++) times.push(await rollout(environment, round));
  summary[name] = Number(median(times).toFixed(2));
  console.log(
    JSON.stringify({
      setup: name,
      episodes: prompts * samples,
      rounds,
      medianMs: summary[name],
      minMs: Number(Math.min(...times).toFixed(2)),
    }),
  );
  environment.close?.();
}
console.log(`median ms per rollout's environment work (${prompts * samples} episodes):`, summary);
await Promise.all(servers.map((s) => s.close(0)));
