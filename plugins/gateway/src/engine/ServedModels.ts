import { didYouMean, type PolicyBackend, type TextCodec, type WorkerGroup } from '@drmas/core';
import { MicroBatcher, type MicroBatchOptions } from '@drmas/models';

/** A name clients pass as `model`: a model id (`models.<id>`) or an agent role (`agents.<role>`) on its model. */
export interface ServedModel {
  name: string;
  /** The `models.<id>` whose engine samples. */
  modelId: string;
  /** The agent role, when `name` is one. */
  agent?: string;
  engine: PolicyBackend;
  codec: TextCodec | undefined;
  batcher: MicroBatcher;
}

/**
 * The run's worker groups as `model` names: each model id, then each agent role (a role spelled like a model id is
 * that model). Agents on one model share its engine and its micro-batcher, so their calls batch together.
 */
export class ServedModels {
  private readonly byName = new Map<string, ServedModel>();

  constructor(groups: readonly WorkerGroup[], options: MicroBatchOptions) {
    const models = groups.map((group) => {
      const served: ServedModel = {
        name: group.id,
        modelId: group.id,
        engine: group.rollout,
        codec: group.codec ?? group.rollout.tokenizer,
        batcher: new MicroBatcher(group.rollout, options),
      };
      this.byName.set(group.id, served);
      return { group, served };
    });
    for (const { group, served } of models) {
      for (const agent of group.agents) {
        if (!this.byName.has(agent)) this.byName.set(agent, { ...served, name: agent, agent });
      }
    }
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  all(): ServedModel[] {
    return [...this.byName.values()];
  }

  find(name: string): ServedModel | undefined {
    return this.byName.get(name);
  }

  /** What to tell a client that asked for a name this gateway does not serve. */
  suggest(name: string): string {
    return didYouMean(name, this.names()).trim() || `this gateway serves: ${this.names().join(', ')}`;
  }

  /** Engine calls made by every model's batcher, summed. */
  generateCalls(): number {
    return [...new Set(this.all().map((model) => model.batcher))].reduce((sum, batcher) => sum + batcher.stats.generateCalls, 0);
  }
}
