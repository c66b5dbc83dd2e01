import {
  DrmasError,
  EpochSchedule,
  noTrainingTaskLeft,
  type EnvAction,
  type EnvTaskBatch,
  type Environment,
  type Episode,
} from '@drmas/core';
import { CodeSandboxes, type CodeSandbox } from '@drmas/plugin-env-code';
import { Bm25Retriever, generateKnowledgeBase, type Retriever, type SearchDocument } from '@drmas/plugin-env-search';
import type { ToolDefinition } from '../registry/ToolDefinition.js';
import { ToolRegistry } from '../registry/ToolRegistry.js';
import { loadToolTasks, splitToolTasks } from '../tasks/loadToolTasks.js';
import { syntheticToolTasks } from '../tasks/syntheticToolTasks.js';
import type { ToolTask } from '../tasks/ToolTask.js';
import { calculatorTool } from '../tools/calculator.js';
import { filesystemTool } from '../tools/filesystemTool.js';
import { pythonTool } from '../tools/pythonTool.js';
import { searchTool } from '../tools/searchTool.js';
import { toolsEnvSettings, type ToolsEnvSettings, type ToolsEnvSettingsInput } from './toolsEnvConfig.js';
import { ToolEpisode } from './ToolEpisode.js';

/** Looks the enabled tools up by name (in a kernel: the `Tool` contributions of every plugin). */
export type ToolResolver = (names: readonly string[]) => ToolDefinition[];

/**
 * Tool use (env-tools): each task is a question the agent answers after calling tools (`env.tools.enabled`: the
 * calculator, search over env-search's knowledge base, a Python REPL in env-code's Pyodide sandbox, an in-memory
 * filesystem per episode, and any tool a plugin adds). Synthetic tasks (`env.tools.kinds`) or a task file.
 */
export class ToolEnvironment implements Environment<ToolTask> {
  readonly name = 'tools';
  private readonly settingsOf: () => ToolsEnvSettingsInput;
  private settings?: ToolsEnvSettings;
  private split?: { train: ToolTask[]; test: ToolTask[]; schedule: EpochSchedule };
  private registry?: ToolRegistry;
  private retriever?: Retriever;
  private sandboxes?: CodeSandboxes;
  private resolver?: ToolResolver;

  constructor(settings: ToolsEnvSettingsInput | (() => ToolsEnvSettingsInput) = {}) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  get maxSteps(): number {
    return this.settings?.maxSteps ?? 3;
  }

  /** The built-in tools, bound to this environment's retriever, sandbox and settings (read when a tool runs). */
  builtinTools(): ToolDefinition[] {
    const tools = () => this.ready().settings.tools;
    return [
      calculatorTool,
      searchTool(
        () => this.searcher(),
        () => tools().topk,
      ),
      pythonTool({
        sandbox: () => this.sandbox,
        limits: () => ({ timeoutMs: tools().pythonTimeoutMs, memoryBytes: tools().pythonMemoryMb * 1024 * 1024 }),
      }),
      filesystemTool,
    ] as ToolDefinition[];
  }

  /** Where `env.tools.enabled` is looked up; without one, among the built-ins. */
  resolveToolsWith(resolver: ToolResolver): void {
    this.resolver = resolver;
  }

  async init(): Promise<void> {
    if (this.split) return;
    const s = toolsEnvSettings.parse(this.settingsOf());
    this.settings = s;
    const { tools } = s;
    let split: { train: ToolTask[]; test: ToolTask[] };
    if (tools.file) {
      split = splitToolTasks(await loadToolTasks(tools.file), s.testFraction);
      if (split.train.length === 0) throw noTrainingTaskLeft(tools.file, 'env.tools.file');
    } else {
      split = syntheticToolTasks({
        seed: s.seed,
        kinds: tools.kinds,
        trainSize: tools.trainSize,
        testSize: tools.testSize,
        entities: tools.entities,
      });
    }
    const enabled = this.resolver ? this.resolver(tools.enabled) : this.builtinsNamed(tools.enabled);
    this.registry = new ToolRegistry(enabled, { timeoutMs: tools.timeoutMs, maxOutputChars: tools.maxOutputChars });
    // Training tasks cycle in epochs, each its own shuffle of (seed, epoch), so a saved cursor resumes exactly.
    this.split = { ...split, schedule: new EpochSchedule(split.train.length, s.seed, 'tools-train') };
  }

  get tools(): ToolRegistry {
    return this.ready().registry;
  }

  /** The sandboxes the Python tool runs in (started on its first call). */
  get sandbox(): CodeSandbox {
    return (this.sandboxes ??= new CodeSandboxes());
  }

  batch(cursor: number, count: number): EnvTaskBatch<ToolTask> {
    const { split } = this.ready();
    const tasks: ToolTask[] = [];
    for (let c = cursor; c < cursor + count; c++) tasks.push({ ...split.train[split.schedule.indexAt(c)]! });
    return { tasks, nextCursor: cursor + count };
  }

  test(): ToolTask[] {
    return this.ready().split.test.map((task) => ({ ...task }));
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

  async step(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`step got ${actions.length} actions for ${episodes.length} episodes`);
    await Promise.all(episodes.map((episode, i) => (episode as ToolEpisode).apply(actions[i]!)));
  }

  /** Frees the Python sandbox's worker. */
  async dispose(): Promise<void> {
    await this.sandboxes?.dispose();
    this.sandboxes = undefined;
  }

  private searcher(): Retriever {
    const s = this.ready().settings;
    return (this.retriever ??= new Bm25Retriever(
      generateKnowledgeBase({ seed: s.seed, entities: s.tools.entities }).documents as SearchDocument[],
    ));
  }

  private builtinsNamed(names: readonly string[]): ToolDefinition[] {
    const builtins = new Map(this.builtinTools().map((tool) => [tool.name, tool]));
    return names.map((name) => {
      const tool = builtins.get(name);
      if (!tool)
        throw new DrmasError('CONFIG_INVALID', `env.tools.enabled names "${name}", which is not a built-in tool`, {
          key: 'env.tools.enabled',
          hint: `the built-ins are ${[...builtins.keys()].join(', ')}; a plugin's tools are found when the environment runs in a kernel`,
        });
      return tool;
    });
  }

  private ready(): { settings: ToolsEnvSettings; split: NonNullable<ToolEnvironment['split']>; registry: ToolRegistry } {
    if (!this.settings || !this.split || !this.registry) throw new Error('ToolEnvironment used before init()');
    return { settings: this.settings, split: this.split, registry: this.registry };
  }
}
