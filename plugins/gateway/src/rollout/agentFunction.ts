import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DrmasError, type EnvTask } from '@drmas/core';

/**
 * Where an episode's calls go: an OpenAI-compatible base URL holding the episode's capture session. It suits any
 * client: `new OpenAI(connection)` or `createOpenAICompatible({ name: 'drmas', ...connection })`.
 */
export interface GatewayConnection {
  /** `http://127.0.0.1:<port>/<session>/v1`. */
  baseURL: string;
  /** Any value does; clients insist on one. */
  apiKey: string;
}

export interface EpisodeContext {
  /** The task's prompt variables (`{ question }` for math), as the environment gives them to prompts. */
  variables: Record<string, string>;
  /** What the episode's agents see of the environment at the start. */
  observation: string;
  /** A seed for this episode (from the rollout's seed and the episode's index), to pass as `seed` for reproducible calls. */
  seed: number;
  /** The capture session, for `set_reward` (`POST <baseURL without /v1>/rl/set_reward`). */
  sessionId: string;
}

/**
 * The user's agent: one episode of `task`, its model calls sent to `connection`, answering the final answer the
 * environment scores (math: a solution whose last `\boxed{}` is graded).
 */
export type AgentFunction = (task: EnvTask, connection: GatewayConnection, context: EpisodeContext) => Promise<string>;

/** Imports `gateway.agent`: a module whose default export (or `agent` export) is the agent function. */
export async function loadAgentFunction(modulePath: string, cwd: string): Promise<AgentFunction> {
  const file = path.resolve(cwd, modulePath);
  let mod: { default?: unknown; agent?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (cause) {
    throw new DrmasError('CONFIG_INVALID', `the agent module ${file} did not load: ${(cause as Error).message}`, {
      key: 'gateway.agent',
      cause,
      hint: 'a .js/.mjs module (or .ts where the runtime imports TypeScript) whose default export is (task, connection, context) => Promise<string>',
    });
  }
  const fn = typeof mod.default === 'function' ? mod.default : mod.agent;
  if (typeof fn !== 'function') {
    throw new DrmasError('CONFIG_INVALID', `the agent module ${file} exports no function (as default or as \`agent\`)`, {
      key: 'gateway.agent',
      hint: 'export default async function agent(task, connection, context) { ...; return answer; }',
    });
  }
  return fn as AgentFunction;
}
