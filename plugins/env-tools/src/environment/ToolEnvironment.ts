import {
  closestMatches,
  DrmasError,
  noTrainingTaskLeft,
  TaskPool,
  type EnvAction,
  type EnvTaskBatch,
  type Environment,
  type Episode,
  type Tool,
  type ToolTaskKind,
} from '@drmas/core';
import { ToolRegistry } from '../registry/ToolRegistry.js';
import { loadToolTasks, splitToolTasks } from '../tasks/loadToolTasks.js';
import { syntheticToolTasks } from '../tasks/syntheticToolTasks.js';
import type { ToolTask } from '../tasks/ToolTask.js';
import { calculatorTool } from '../tools/calculator.js';
import { filesystemTool } from '../tools/filesystemTool.js';
import { toolsEnvSettings, type ToolsEnvSettings, type ToolsEnvSettingsInput } from './toolsEnvConfig.js';
import { ToolEpisode } from './ToolEpisode.js';

/** env-tools' own tools: the calculator (with its `arithmetic` tasks) and the filesystem (`file`). */
export const BUILTIN_TOOLS: readonly Tool[] = [calculatorTool, filesystemTool] as Tool[];

/**
 * Where the environment finds its tools by name: in a kernel, every plugin's `Tool` contributions (env-search's
 * `search`, env-code's `python`, a third party's); alone, `BUILTIN_TOOLS`.
 */
export interface ToolLookup {
  /** The tool called `name`; `key` is the config key that named it (for the message when there is none). */
  tool(name: string, key: string): Tool;
  /** Every tool's name, in registration order. */
  names(): string[];
}

/** A lookup over `tools` alone, failing as a kernel's does (UNKNOWN_NAME with the closest names). */
export function toolLookup(tools: readonly Tool[]): ToolLookup {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  return {
    names: () => [...byName.keys()],
    tool(name, key) {
      const tool = byName.get(name);
      if (tool) return tool;
      const close = closestMatches(name, byName.keys());
      throw new DrmasError('UNKNOWN_NAME', `no tool named "${name}" is registered (registered: ${[...byName.keys()].join(', ')})`, {
        key,
        hint: close.length
          ? `Did you mean ${close.map((n) => `"${n}"`).join(' or ')}?`
          : 'add the plugin that provides it (env-search: search, env-code: python)',
      });
    },
  };
}

/**
 * The task kinds `kinds` names, each offered by one of the tools `lookup` finds (the calculator's `arithmetic`,
 * env-search's `lookup`, the filesystem's `file`); an unknown kind is UNKNOWN_NAME at `env.tools.kinds`.
 */
export function toolTaskKinds(lookup: ToolLookup, kinds: readonly string[]): ToolTaskKind[] {
  const offered = new Map<string, ToolTaskKind>();
  for (const name of lookup.names()) {
    const tasks = lookup.tool(name, 'env.tools.enabled').tasks;
    if (tasks && !offered.has(tasks.kind)) offered.set(tasks.kind, tasks);
  }
  return kinds.map((kind) => {
    const tasks = offered.get(kind);
    if (tasks) return tasks;
    const close = closestMatches(kind, offered.keys());
    throw new DrmasError('UNKNOWN_NAME', `no tool offers tasks of kind "${kind}" (offered: ${[...offered.keys()].join(', ') || 'none'})`, {
      key: 'env.tools.kinds',
      hint: close.length
        ? `Did you mean ${close.map((n) => `"${n}"`).join(' or ')}?`
        : 'add the plugin whose tool offers it (env-search: lookup), or drop it from env.tools.kinds',
    });
  });
}

/**
 * Tool use (env-tools): each task is a question the agent answers after calling tools (`env.tools.enabled`: the
 * calculator and an in-memory filesystem per episode, env-search's search over its knowledge base, env-code's Python
 * REPL in its Pyodide sandbox, any tool a plugin adds). Synthetic tasks of the kinds the tools offer
 * (`env.tools.kinds`) or a task file.
 */
export class ToolEnvironment implements Environment<ToolTask> {
  readonly name = 'tools';
  private readonly settingsOf: () => ToolsEnvSettingsInput;
  private settings?: ToolsEnvSettings;
  private pool?: TaskPool<ToolTask>;
  private registry?: ToolRegistry;

  /** `lookup`: where tools are found (the plugin hands it the kernel's); default: the built-ins alone. */
  constructor(
    settings: ToolsEnvSettingsInput | (() => ToolsEnvSettingsInput) = {},
    private lookup: ToolLookup = toolLookup(BUILTIN_TOOLS),
  ) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  get maxRounds(): number {
    return this.settings?.maxRounds ?? 3;
  }

  /** Where `env.tools.enabled` and `env.tools.kinds` are looked up (in a kernel: every plugin's `Tool` contributions). */
  lookUpIn(lookup: ToolLookup): void {
    this.lookup = lookup;
  }

  async init(): Promise<void> {
    if (this.pool) return;
    const s = toolsEnvSettings.parse(this.settingsOf());
    const { tools } = s;
    let split: { train: ToolTask[]; test: ToolTask[] };
    if (tools.file) {
      split = splitToolTasks(await loadToolTasks(tools.file), s.testFraction);
      if (split.train.length === 0) throw noTrainingTaskLeft(tools.file, 'env.tools.file');
    } else {
      split = syntheticToolTasks({
        seed: s.seed,
        kinds: toolTaskKinds(this.lookup, tools.kinds),
        trainSize: tools.trainSize,
        testSize: tools.testSize,
      });
    }
    const enabled = tools.enabled.map((name) => this.lookup.tool(name, 'env.tools.enabled'));
    this.registry = new ToolRegistry(enabled, { timeoutMs: tools.timeoutMs, maxOutputChars: tools.maxOutputChars });
    // Training tasks cycle in epochs, each its own shuffle of (seed, epoch), so a saved cursor resumes exactly.
    this.pool = new TaskPool(split.train, split.test, s.seed, 'tools-train');
    this.settings = s;
  }

  get tools(): ToolRegistry {
    return this.ready().registry;
  }

  batch(cursor: number, count: number): EnvTaskBatch<ToolTask> {
    return this.ready().pool.batch(cursor, count);
  }

  test(): ToolTask[] {
    return this.ready().pool.test();
  }

  reset(task: ToolTask): ToolEpisode {
    const { settings, registry } = this.ready();
    const t = settings.tools;
    return new ToolEpisode(task, registry, {
      format: t.format,
      maxCallsPerTurn: t.maxCallsPerTurn,
      formatReward: t.formatReward,
      callPenalty: t.callPenalty,
    });
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    await Promise.all(episodes.map((episode, i) => (episode as ToolEpisode).apply(actions[i]!)));
  }

  private ready(): { settings: ToolsEnvSettings; pool: TaskPool<ToolTask>; registry: ToolRegistry } {
    if (!this.settings || !this.pool || !this.registry) throw new Error('ToolEnvironment used before init()');
    return { settings: this.settings, pool: this.pool, registry: this.registry };
  }
}
