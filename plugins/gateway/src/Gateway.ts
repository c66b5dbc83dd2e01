import {
  DrmasError,
  Engines,
  rolloutEngineKey,
  rolloutEngineName,
  WorkerGroups,
  type Kernel,
  type RunContext,
  type WorkerGroup,
} from '@drmas/core';
import { ServedModels } from './engine/ServedModels.js';
import type { MicroBatchOptions } from '@drmas/models';
import { GatewayServer } from './server/GatewayServer.js';

export interface GatewayOptions extends MicroBatchOptions {
  host: string;
  port: number;
  log: (message: string) => void;
  /** A capture session untouched this long is freed (default 30 minutes). */
  sessionIdleMs?: number;
}

/** Defaults of `drmas gateway`: loopback only, a 5 ms batching window, 32 rows per engine call. */
export const GATEWAY_DEFAULTS = { host: '127.0.0.1', port: 8000, windowMs: 5, maxBatch: 32 } as const;

/**
 * A gateway over a kernel's run: its worker groups' sampling engines loaded as a rollout worker loads them (no
 * trainer, no run directory), and the sampling engine of each model no agent uses, served over HTTP until `close`.
 */
export class Gateway {
  private constructor(
    private readonly groups: WorkerGroups,
    private readonly unused: readonly WorkerGroup[],
    readonly server: GatewayServer,
    /** `http://host:port` (no `/v1`). */
    readonly url: string,
  ) {}

  static async open(kernel: Kernel, options: GatewayOptions): Promise<Gateway> {
    const groups = kernel.get(WorkerGroups);
    refuseLoraAgents(groups);
    const run = kernel.runContext({ runDir: kernel.cwd, log: options.log });
    await groups.createForSampling(run);
    const unused: WorkerGroup[] = [];
    try {
      for (const id of Object.keys(kernel.config.models)) {
        if (!groups.all().some((group) => group.id === id)) unused.push(await openUnusedModel(kernel, id, run));
      }
      const server = new GatewayServer(new ServedModels([...groups.all(), ...unused], options), {
        host: options.host,
        port: options.port,
        sessionIdleMs: options.sessionIdleMs,
      });
      const url = await server.start();
      return new Gateway(groups, unused, server, url);
    } catch (error) {
      groups.dispose();
      for (const group of unused) group.rollout.dispose();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.server.stop();
    this.groups.dispose();
    for (const group of this.unused) group.rollout.dispose();
  }
}

/**
 * A model no agent uses, as a group of no agents: it samples on the engine `models.<id>.rollout` names (`auto`: the
 * best available one that samples), else on its `backend` (`auto`: the best available one).
 */
async function openUnusedModel(kernel: Kernel, id: string, run: RunContext): Promise<WorkerGroup> {
  const settings = { ...kernel.config.models[id]!, seed: kernel.config.models[id]!.seed ?? kernel.config.trainer.seed };
  const rollout = rolloutEngineName(settings.rollout);
  const choice = await kernel.get(Engines).select({
    name: rollout ?? settings.backend,
    key: rollout === undefined ? `models.${id}.backend` : rolloutEngineKey(id, settings.rollout),
    settings,
    needs: ['sample'],
  });
  if (choice.skipped.length) {
    run.log(`model ${id} samples on ${choice.name}; skipped ${choice.skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`);
  }
  const engine = await choice.factory.create({ modelId: id, settings, run });
  run.log(`model ${id} (no agent uses it): samples on ${engine.name} (${engine.runtime})`);
  return { id, agents: [], trainer: engine, rollout: engine, codec: engine.tokenizer };
}

/**
 * A LoRA agent's engine starts from PEFT's init (B = 0: the base model) unless `agents.<role>.lora.adapter` names a
 * trained adapter, so without one a gateway would serve the base under the agent's name.
 */
function refuseLoraAgents(groups: WorkerGroups): void {
  const untrained = groups.planned().flatMap(({ model, lora }) => (lora && !lora.adapter ? [{ model, agent: lora.agent }] : []));
  if (untrained.length === 0) return;
  const { model, agent } = untrained[0]!;
  throw new DrmasError('CONFIG_INVALID', `drmas gateway would serve agent "${agent}"'s LoRA adapter untrained (the base model)`, {
    key: `agents.${agent}.lora`,
    hint:
      `name the trained adapter in agents.${agent}.lora.adapter (<run>/checkpoints/step-N/${model}@${agent}), or merge it ` +
      `(drmas export --merge-lora <run>/checkpoints/step-N --role ${agent} --out DIR) and serve DIR as models.${model}.model, ` +
      `without agents.${agent}.lora`,
  });
}
