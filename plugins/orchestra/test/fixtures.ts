import { OrchestraRunner, PromptedAgent, type Agent, type Orchestra } from '../src/index.js';
import {
  WorkerGroups,
  type Environment,
  type GenerateRequest,
  type Kernel,
  type GenerateResult,
  type Plugin,
  type PolicyBackend,
  type RunContext,
  type StepResult,
  type TextCodec,
  type WorkerGroup,
} from '@drmas/core';

/** One character per token (its code point); optionally with a toy chat template. */
export class CharCodec implements TextCodec {
  readonly vocabSize = 0x110000;
  readonly eosTokenId = undefined;
  constructor(readonly chatTemplate?: string) {}

  encode(text: string): number[] {
    return Array.from(text, (c) => c.codePointAt(0)!);
  }

  decode(ids: ArrayLike<number>): string {
    return Array.from(ids as number[], (id) => String.fromCodePoint(id)).join('');
  }

  applyChatTemplate(messages: { role: string; content: string }[], options: { addGenerationPrompt?: boolean } = {}): string {
    return messages.map((m) => `[${m.role}]${m.content}[/${m.role}]`).join('') + (options.addGenerationPrompt ? '[assistant]' : '');
  }
}

export type Script = (prompt: string, request: GenerateRequest, row: number) => string;

/**
 * A deterministic PolicyBackend that answers each prompt with a scripted text (encoded by CharCodec). Records
 * every request and every result so tests can count batched calls and check what was stored.
 */
export class ScriptedBackend implements PolicyBackend {
  readonly runtime = 'scripted';
  readonly requests: GenerateRequest[] = [];
  readonly results: GenerateResult[] = [];
  readonly codec = new CharCodec();
  constructor(
    readonly name: string,
    private readonly script: Script,
  ) {}

  get tokenizer(): TextCodec {
    return this.codec;
  }

  get vocabSize(): number {
    return this.codec.vocabSize;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(request);
    const tokenIds = request.prompts.map((ids, row) => this.codec.encode(this.script(this.codec.decode(ids), request, row)));
    const result: GenerateResult = {
      tokenIds,
      logProbs: tokenIds.map((ids) => ids.map((_, i) => -(i + 1) / 100)),
      finishReasons: tokenIds.map(() => 'stop' as const),
    };
    this.results.push(result);
    return result;
  }

  parameterNames(): string[] {
    return [];
  }

  /** Rows of each generate call. */
  get batchSizes(): number[] {
    return this.requests.map((r) => r.prompts.length);
  }

  score(): never {
    throw new Error('not used');
  }
  update(): never {
    throw new Error('not used');
  }
  save(): never {
    throw new Error('not used');
  }
  load(): never {
    throw new Error('not used');
  }
  exportWeights(): never {
    throw new Error('not used');
  }
  async syncWeights(): Promise<void> {}
  dispose(): void {}
}

/** A WorkerGroups with one group per distinct backend; `byAgent` maps roles to their backend. */
export function testWorkerGroups(
  byAgent: Record<string, PolicyBackend>,
  codecOf: (b: PolicyBackend) => TextCodec | undefined = (b) => b.tokenizer,
): WorkerGroups {
  const groups = new Map<PolicyBackend, WorkerGroup>();
  for (const [agentId, backend] of Object.entries(byAgent)) {
    const group =
      groups.get(backend) ??
      ({
        id: `model-${groups.size}`,
        agents: [],
        trainer: backend,
        rollout: backend,
        codec: codecOf(backend),
        training: {
          lr: 1e-4,
          betas: [0.9, 0.999],
          eps: 1e-8,
          weightDecay: 0,
          warmupSteps: 0,
          schedule: 'constant',
          maxGradNorm: 1,
          paramGroups: [],
          microBatchSize: 1,
          miniBatches: 1,
          epochs: 1,
        },
      } as WorkerGroup);
    group.agents.push(agentId);
    groups.set(backend, group);
  }
  const all = [...groups.values()];
  return {
    ids: () => all.map((g) => g.id),
    planned: () => all.map((g) => ({ id: g.id, model: g.id, agents: g.agents })),
    createForSampling: async () => {},
    dispose: () => {},
    all: () => all,
    get: (id) => all.find((g) => g.id === id)!,
    forAgent: (agentId) => {
      const backend = byAgent[agentId];
      const group = backend && groups.get(backend);
      if (!group) throw new Error(`no worker group for agent "${agentId}"`);
      return group;
    },
  };
}

/** A plugin binding `groups` as the run's WorkerGroups (the training side does this for real). */
export function workerGroupsPlugin(groups: WorkerGroups): Plugin {
  return {
    name: 'test-worker-groups',
    register: (ctx) => {
      ctx.bind(WorkerGroups).toConstantValue(groups);
    },
    apply() {},
  };
}

/** Which built-in prompt a text was rendered from. */
export function roleOf(prompt: string): string {
  if (prompt.includes('You are the Solver')) return 'solver';
  if (prompt.includes('You are the Verifier')) return 'verifier';
  if (prompt.includes('You are the Search agent')) return 'searcher';
  if (prompt.includes('You are the Answer agent')) return 'answerer';
  return 'unknown';
}

export type Scripts = Record<string, (prompt: string, request: GenerateRequest, row: number) => string>;

/** A runner whose agents each sample from their own scripted backend (so calls can be counted per agent). */
export function scriptedRunner(orchestra: Orchestra, environment: Environment, scripts: Scripts, settings: Record<string, unknown> = {}) {
  const backends = Object.fromEntries(
    Object.keys(orchestra.agents).map((role) => [role, new ScriptedBackend(role, scripts[role] ?? (() => ''))]),
  );
  const agents = new Map<string, Agent>(Object.entries(orchestra.agents).map(([role, o]) => [role, new PromptedAgent({ role, ...o })]));
  const runner = new OrchestraRunner({
    environment,
    orchestra,
    agents,
    settings,
    engineFor: (agentId) => {
      const backend = backends[agentId];
      if (!backend) throw new Error(`no scripted backend for agent "${agentId}"`);
      return { workerGroupId: `wg-${agentId}`, backend, codec: backend.codec };
    },
  });
  return { runner, backends };
}

/** What a test needs to call `kernel.step`: the kernel's run context, no run directory, no log. */
export function testRunContext(kernel: Pick<Kernel, 'runContext'>): RunContext {
  return kernel.runContext({ runDir: '/tmp/unused', log: () => {} });
}

/** A plugin keeping each step's result at `afterStep` (its rollout, its packed batch): `last()` is the latest. */
export function stepCapture(): { plugin: Plugin; last(): StepResult } {
  let seen: StepResult | undefined;
  return {
    plugin: {
      name: 'capture',
      apply(k) {
        k.hooks.afterStep.tap('capture', (result) => {
          seen = result;
        });
      },
    },
    last: () => {
      if (!seen) throw new Error('no step has ended');
      return seen;
    },
  };
}
