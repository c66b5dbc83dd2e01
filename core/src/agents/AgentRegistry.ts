import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import { createToken } from '../di/Token.js';
import type { BindingLedger } from '../di/BindingLedger.js';
import { agentName, type AgentConstructor } from './agent.js';

export const Agent = createToken<AgentConstructor>('Agent', { label: 'agent', configKey: 'agents', named: true });

interface Entry {
  create: AgentConstructor;
  origin: string;
}

/**
 * The agent roles of one kernel. Plugins register classes decorated with `@agent('name')` (or a name and a
 * class); config refers to them by name under `agents`.
 */
export class AgentRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly ledger?: BindingLedger) {}

  /** Registers `@agent`-decorated `target`, or `target` under `name`; `origin` is the registering plugin. */
  register(nameOrClass: string | AgentConstructor, targetOrOrigin?: AgentConstructor | string, origin = 'unknown'): void {
    let name: string | undefined;
    let target: AgentConstructor;
    if (typeof nameOrClass === 'string') {
      name = nameOrClass;
      target = targetOrOrigin as AgentConstructor;
    } else {
      target = nameOrClass;
      name = agentName(target);
      if (typeof targetOrOrigin === 'string') origin = targetOrOrigin;
    }
    if (typeof target !== 'function') {
      throw new DrmasError('INVALID_ARGUMENT', `agent "${name ?? '?'}" registered by ${origin} is not a class`, {
        hint: "pass a class decorated with @agent('name'), or register('name', Class)",
      });
    }
    if (!name) {
      throw new DrmasError('INVALID_ARGUMENT', `class ${target.name} registered by ${origin} has no agent name`, {
        hint: `decorate it with @agent('name') or call register('name', ${target.name})`,
      });
    }
    const existing = this.entries.get(name);
    if (existing) {
      throw new DrmasError(
        'DUPLICATE_NAME',
        `agent "${name}" is registered twice: ${existing.create.name} by ${existing.origin} and ${target.name} by ${origin}`,
        {
          key: `agents.${name}`,
          hint: 'give one of the two classes another @agent name, or drop one of the plugins',
        },
      );
    }
    this.ledger?.record({ key: Agent, name, plugin: origin });
    this.entries.set(name, { create: target, origin });
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  origin(name: string): string | undefined {
    return this.entries.get(name)?.origin;
  }

  /** The class of role `name`; `key` is the config key that asked for it (for the error message). */
  resolve(name: string, key = `agents.${name}`): AgentConstructor {
    const entry = this.entries.get(name);
    if (entry) return entry.create;
    const names = this.names();
    throw new DrmasError(
      'UNKNOWN_NAME',
      `no agent named "${name}" is registered${names.length ? ` (registered: ${names.join(', ')})` : ''}`,
      {
        key,
        hint: didYouMean(name, names).trim() || 'add the plugin or preset that provides this agent, or register your own with @agent',
      },
    );
  }

  create<T = unknown>(name: string, options: Record<string, unknown> = {}, key?: string): T {
    const Target = this.resolve(name, key);
    return new Target(options) as T;
  }
}
