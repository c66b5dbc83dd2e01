import 'reflect-metadata';
import path from 'node:path';
import { Container, ContainerModule, type ContainerModuleLoadOptions } from 'inversify';
import type { ZodType } from 'zod';
import { AgentRegistry } from '../agents/AgentRegistry.js';
import type { AgentConstructor } from '../agents/agent.js';
import { ResolvedConfig } from '../config/ResolvedConfig.js';
import { configSchemaOf } from '../config/resolveConfig.js';
import type { Metrics, RunContext, StepContext, StepResult } from '../data/StepContext.js';
import { TrainingBatch } from '../data/TrainingBatch.js';
import { BindingLedger } from '../di/BindingLedger.js';
import { injected, type Dependencies, type Injected } from '../di/Dependencies.js';
import { translateContainerError } from '../di/containerErrors.js';
import type { RegisterContext } from '../di/RegisterContext.js';
import { describeKey } from '../di/BindingLedger.js';
import { serviceIdentifier, type ServiceKey, type Token } from '../di/Token.js';
import { DrmasError } from '../errors/DrmasError.js';
import { didYouMean } from '../errors/didYouMean.js';
import type { LoadedPlugin } from '../plugins/PluginLoader.js';
import { absentPluginError, type AbsentPlugin } from '../plugins/absentPlugins.js';
import { coreServices } from '../services/coreServices.js';
import { MetricsSink } from '../services/MetricsSink.js';
import { RunFile } from '../services/RunFile.js';
import { Contributions } from '../services/Contributions.js';
import { createKernelHooks, type HookName, type KernelHooks } from './KernelHooks.js';
import { PluginErrorInterceptor } from './PluginErrorInterceptor.js';
import { TimingInterceptor } from './TimingInterceptor.js';
import { TapLedger, type TapRecord } from './TapLedger.js';
import { RolloutService } from './RolloutService.js';
import type { ApplyContext } from './ApplyContext.js';
import { Rollouts } from '../services/Rollouts.js';
import { processMemory } from './processMemory.js';
import { ADVANTAGE_PLUGIN_NAME } from '../builtins/AdvantagePlugin.js';
import { planEvaluation, planRun, type RunPlan } from '../run/runDirectory.js';
import { resolveMemoryBudget } from '../run/memoryBudget.js';
import { RunDirectoryLock } from '../services/RunDirectoryLock.js';
import { setAsideEarlierRun, setAsideLaterCheckpoints } from '../run/runFiles.js';
import { WorkerGroups } from '../services/WorkerGroups.js';
import { ConfigSecrets, Secrets, type SecretEnv } from '../secrets/Secrets.js';

export interface RunOptions {
  /** The run directory (relative to the kernel's folder); default `<trainer.outputDir>/<trainer.runName or a timestamp>`. */
  runDir?: string;
  /**
   * Continue a run: `auto` (the newest checkpoint that verifies of `runDir`, or of the newest run; none: start at step
   * 1), a run directory (its newest checkpoint that verifies) or a checkpoint folder (which must verify).
   */
  resume?: string;
  /** Aborting stops the run before the next step (a checkpoint of the last finished step is written). */
  signal?: AbortSignal;
  /** Where the run's messages go; default: standard error, each line prefixed `drmas: `. */
  log?: (message: string) => void;
}

/** What `setup` needs: the run directory and, on resume, the checkpoint plugins restore from. */
export interface SetupOptions {
  runDir: string;
  /** The option or config key that chose `runDir` (`--run-dir`, `trainer.outputDir`, `--out`), for messages. */
  runDirKey?: string;
  signal?: AbortSignal;
  log?: (message: string) => void;
  resumeFrom?: string;
}

export interface KernelOptions {
  /** The folder relative paths and the default run directory resolve from (default: the process's). */
  cwd?: string;
  /** The config file the kernel was made from, for messages. */
  configFile?: string;
  /** Where a config key was set (its file, or the `--set` text), for errors that name a key but no file. */
  locate?: (key: string) => string | undefined;
  /** The config layer that set a key: a file path, `preset <name>`, `--set <text>`; undefined when none did. */
  originOf?: (key: string) => string | undefined;
  /** Presets' optional plugins that are not installed: a config naming what one provides is told to install it. */
  absentPlugins?: AbsentPlugin[];
  /** The config's schema, whose secret keys `Secrets` hides (`resolveConfig`'s); default: built from the plugins' sections. */
  schema?: ZodType;
  /** Where deprecation warnings go (a contribution in an older form, adapted); default: standard error. */
  warn?: (message: string) => void;
}

const CONFIG_KEY = /^[A-Za-z_$][\w$-]*(?:[.[]|$)/;

const DRIVEN_BY_CALLER = 'apply taps hooks; the code that made the kernel (createKernel) drives it';
/** The kernel's members that `apply` does not get, and what a plugin uses instead. */
const KERNEL_ONLY: Readonly<Record<string, string>> = Object.freeze({
  container: 'bind in register(ctx), then declare what your taps use: kernel.inject({ name: token }) (or @inject it into a class of yours)',
  ledger: 'kernel.namesOf(token) lists the names registered for a service, kernel.tapsOf(hook) the taps of a hook',
  modules: 'kernel.namesOf(token) lists the names registered for a service',
  plugins: 'kernel.config.plugins names the plugins the config lists',
  locate: 'kernel.originOf(key) says which file, preset or --set set a key',
  secrets: 'declare the Secrets service: const { secrets } = kernel.inject({ secrets: Secrets })',
  hasTaps: 'kernel.tapsOf(hook).length',
  configure: DRIVEN_BY_CALLER,
  setup: DRIVEN_BY_CALLER,
  shutdown: DRIVEN_BY_CALLER,
  run: DRIVEN_BY_CALLER,
  step: DRIVEN_BY_CALLER,
  evaluate: DRIVEN_BY_CALLER,
  runContext: DRIVEN_BY_CALLER,
});

function logToStderr(message: string): void {
  process.stderr.write(`drmas: ${message}\n`);
}

/**
 * The kernel: a frozen set of hooks, a DI container and the step loop. It knows nothing of models or maths;
 * plugins give it behaviour by binding services (`register`, loaded as one inversify `ContainerModule` per plugin) and
 * tapping hooks (`apply`).
 */
export class Kernel implements Contributions {
  readonly hooks: KernelHooks = createKernelHooks();
  readonly container = new Container({ defaultScope: 'Singleton' });
  readonly ledger = new BindingLedger(coreServices());
  /** Each plugin's bindings, as the container module they were loaded in. */
  readonly modules = new Map<string, ContainerModule>();
  readonly agents = new AgentRegistry(this.ledger);
  readonly plugins: LoadedPlugin[] = [];
  readonly cwd: string;
  readonly configFile: string | undefined;
  private readonly timing = new TimingInterceptor();
  private readonly tapLedger = new TapLedger();
  /** Every rollout of a step goes through it: the kernel's own and the further ones plugins ask for. */
  private readonly rollouts = new RolloutService(
    this.hooks,
    (hook) => this.tapsOf(hook),
    () => this.configFile,
    (message) => this.warn(message),
  );
  private resolvedConfig: ResolvedConfig | undefined;
  private readonly schema: ZodType | undefined;
  private configSecrets: Secrets | undefined;
  /** The step the hooks are called for (0: the evaluation before the first step), for errors taps throw. */
  private activeStep: number | undefined;
  /** Where a config key was set (a file, or a `--set` argument); undefined for CLI options and places in data files. */
  readonly locate: (key: string) => string | undefined;
  /** The config layer that set a key: a file path, `preset <name>`, `--set <text>`; undefined when none did. */
  readonly originOf: (key: string) => string | undefined;
  /** Presets' optional plugins that are not installed. */
  readonly absentPlugins: readonly AbsentPlugin[];
  private readonly warn: (message: string) => void;

  constructor(options: KernelOptions = {}) {
    this.cwd = options.cwd ?? process.cwd();
    this.configFile = options.configFile;
    const locate = options.locate ?? (() => this.configFile);
    // Only config keys live in a file; a CLI option (`--data`) or a place in a data file (`line 2`) does not.
    this.locate = (key) => (CONFIG_KEY.test(key) ? locate(key) : undefined);
    this.originOf = options.originOf ?? (() => undefined);
    this.absentPlugins = options.absentPlugins ?? [];
    this.schema = options.schema;
    this.warn = options.warn ?? logToStderr;
    this.timing.install(this.hooks);
    this.tapLedger.install(this.hooks);
    new PluginErrorInterceptor(
      () => this.activeStep,
      this.locate,
      // The kernel's own plugins are listed nowhere the user could edit.
      (tap) => this.plugins.find((p) => p.key !== '(built-in)' && (p.plugin.name === tap || p.plugin.name === tap.split(':')[0])),
    ).install(this.hooks);
    this.container.bind(AgentRegistry).toConstantValue(this.agents);
    this.container.bind(Contributions.id).toConstantValue(this);
    this.container.bind(Rollouts.id).toConstantValue(this.rollouts);
  }

  get config(): ResolvedConfig {
    if (!this.resolvedConfig) throw new Error('Kernel.config read before the config was set (call kernel.configure first)');
    return this.resolvedConfig;
  }

  /** The run's credentials: every copy of the config and every message that leaves the process goes through it. */
  get secrets(): Secrets {
    if (!this.configSecrets) throw new Error('Kernel.secrets read before the config was set (call kernel.configure first)');
    return this.configSecrets;
  }

  /** Sets the resolved config, registers then applies `plugins`, and runs the `configure` and `validate` hooks. */
  configure(config: ResolvedConfig, plugins: LoadedPlugin[]): ResolvedConfig {
    this.resolvedConfig = config;
    this.container.bind(ResolvedConfig.id).toDynamicValue(() => this.config);
    const secretEnv: SecretEnv = Object.fromEntries(plugins.flatMap((loaded) => Object.entries(loaded.plugin.secretEnv ?? {})));
    this.configSecrets = new ConfigSecrets(this.schema ?? configSchemaOf(plugins), () => this.config, secretEnv);
    this.container.bind(Secrets.id).toConstantValue(this.configSecrets);
    try {
      return this.configurePlugins(config, plugins);
    } catch (error) {
      throw this.configSecrets.redactError(error);
    }
  }

  private configurePlugins(config: ResolvedConfig, plugins: LoadedPlugin[]): ResolvedConfig {
    for (const loaded of plugins) this.plugins.push(loaded);
    for (const loaded of plugins) {
      const register = loaded.plugin.register?.bind(loaded.plugin);
      if (!register) continue;
      const module = new ContainerModule((options) => register(this.registerContext(loaded.plugin.name, options)));
      this.modules.set(loaded.plugin.name, module);
      this.guard(loaded, 'register', () => this.container.load(module));
    }
    for (const loaded of plugins) {
      const apply = loaded.plugin.apply?.bind(loaded.plugin);
      if (apply) this.guard(loaded, 'apply', () => apply(this.applyContext(loaded)));
    }
    this.resolvedConfig = this.hooks.configure.call(config);
    this.hooks.validate.call(this.resolvedConfig);
    return this.resolvedConfig;
  }

  /** Resolves a single service (or a class bound to itself); inversify's errors come back as DrmasErrors naming the plugins and config key. */
  get<T>(key: ServiceKey<T>, request: { key?: string; requester?: string } = {}): T {
    this.ledger.remember(key);
    try {
      return this.container.get<T>(serviceIdentifier(key));
    } catch (error) {
      throw translateContainerError(error, this.ledger, { key, configKey: request.key, requester: request.requester });
    }
  }

  /** The services `dependencies` names, each resolved on first use, once (`ApplyContext.inject`); `requester` names who needs them. */
  inject<D extends Dependencies>(dependencies: D, requester?: string): Injected<D> {
    return injected(
      dependencies,
      (key, configKey) => this.get(key, { key: configKey, requester }),
      (key) => this.getAll(key),
    );
  }

  /** Every binding of an open service, in registration order. */
  getAll<T>(key: ServiceKey<T>): T[] {
    const id = serviceIdentifier(key);
    return this.container.isBound(id) ? this.container.getAll<T>(id) : [];
  }

  /**
   * Resolves the contribution called `name` of a named service; `key` is the config key that chose the name. An
   * undefined name (the key is not set) is an error listing what is registered.
   */
  getNamed<T, Provided = T>(token: Token<T, Provided>, name: string | undefined, key?: string): T {
    this.ledger.remember(token);
    const names = this.ledger.namesOf(token);
    const info = describeKey(token);
    if (name === undefined) {
      const configKey = key ?? info.configKey;
      const registered = this.ledger
        .bindingsOf(token)
        .filter((r) => r.name !== undefined)
        .map((r) => `${r.name} (plugin ${r.plugin})`);
      throw new DrmasError(
        'CONFIG_INVALID',
        `${configKey} is not set, so no ${info.label} is chosen (registered: ${registered.join(', ') || 'none'})`,
        {
          key: configKey,
          hint: names.length
            ? `set ${configKey} to one of: ${names.join(', ')}`
            : `add to \`plugins\` a plugin (or a preset) that provides one, and set ${configKey}`,
        },
      );
    }
    if (!names.includes(name)) {
      const absent = this.absentProviders(token, name)[0];
      if (absent) throw absentPluginError(absent, key ?? info.configKey ?? info.label, name);
      throw new DrmasError(
        'UNKNOWN_NAME',
        `no ${info.label} named "${name}" is registered${names.length ? ` (registered: ${names.join(', ')})` : ''}`,
        {
          key: key ?? info.configKey,
          hint:
            didYouMean(name, names).trim() ||
            `add the plugin that provides the ${info.label} "${name}" to \`plugins\` (or a preset that brings it)`,
        },
      );
    }
    try {
      return this.container.get<T>(token.id, { name });
    } catch (error) {
      throw translateContainerError(error, this.ledger, { key: token, name, configKey: key });
    }
  }

  /** The absent optional plugins that would provide a contribution of `token` called `name` (any name when omitted). */
  absentProviders(token: Token<unknown>, name?: string): AbsentPlugin[] {
    const configKey = describeKey(token).configKey;
    return this.absentPlugins.filter((p) => {
      const names = configKey === undefined ? undefined : p.provides[configKey];
      return names !== undefined && (name === undefined || names.includes(name));
    });
  }

  /** The taps of `hook` in the order it calls them, as the kernel recorded them when they were added. */
  tapsOf(hook: HookName): TapRecord[] {
    return this.tapLedger.of(hook);
  }

  /** Whether any plugin tapped `hook` (tapable's `isUsed` also counts the kernel's own interceptors). */
  hasTaps(hook: HookName): boolean {
    return this.tapLedger.of(hook).length > 0;
  }

  namesOf(token: Token<unknown>): string[] {
    return this.ledger.namesOf(token);
  }

  /**
   * Claims the run directory (RUN_DIR_IN_USE while another drmas process writes it), runs the `setup` hook and returns
   * the run context, for commands that drive the kernel themselves; `shutdown` ends the claim. A failed setup calls
   * `failed` with `'setup'` (the run-directory plugin lets the folder go then) and throws.
   */
  async setup(options: SetupOptions): Promise<RunContext> {
    const run = this.runContext(options);
    this.claimRunDir(options.runDir, options.runDirKey ?? 'runDir', (message) => run.log(message));
    try {
      await this.hooks.setup.promise(run);
    } catch (error) {
      this.hooks.failed.call(error as Error, 'setup');
      throw this.secrets.redactError(error);
    }
    return run;
  }

  /** Runs the `shutdown` hook and releases the run directory `setup` claimed. */
  async shutdown(): Promise<void> {
    try {
      await this.hooks.shutdown.promise();
    } catch (error) {
      throw this.secrets.redactError(error);
    } finally {
      this.releaseRunDir();
    }
  }

  /**
   * Trains: `trainer.steps` steps (after the checkpoint's, when resuming) with setup before and shutdown after,
   * writing the run directory `drmas train` writes. A run that does not resume, in a folder holding an earlier run's
   * files, moves them aside first (`previous-<time>/`), so its files hold each step once.
   */
  async run(options: RunOptions = {}): Promise<RunContext> {
    this.checkAdvantages();
    this.checkRolloutProducer();
    const log = this.redactedLog(options.log);
    const plan = await planRun({
      cwd: this.cwd,
      config: this.config,
      runDir: options.runDir,
      resume: options.resume,
      // The worker groups a checkpoint must hold: the trainer knows them from the config before setup creates them.
      workerGroups: options.resume ? this.getAll(WorkerGroups)[0]?.ids() : undefined,
    });
    for (const note of plan.notes) log(note);
    log(
      `config ${this.configFile ?? '(inline)'}; ${this.config.trainer.steps} steps; run directory ${plan.runDir}` +
        (plan.resume ? `; resuming after step ${plan.resume.step} from ${plan.resume.checkpoint}` : ''),
    );
    const runDirKey = options.runDir ? '--run-dir' : options.resume ? '--resume' : 'trainer.outputDir';
    this.claimRunDir(plan.runDir, runDirKey, log);
    try {
      return await this.train(plan, runDirKey, options, log);
    } catch (error) {
      throw this.secrets.redactError(error);
    } finally {
      this.releaseRunDir();
    }
  }

  private async train(plan: RunPlan, runDirKey: string, options: RunOptions, log: (message: string) => void): Promise<RunContext> {
    if (plan.resume) {
      const later = setAsideLaterCheckpoints(plan.runDir, plan.resume.step);
      if (later) log(`moved the checkpoints after step ${plan.resume.step} (${later.moved.join(', ')}) to ${later.dir}`);
    } else {
      const earlier = setAsideEarlierRun(plan.runDir, this.getAll(RunFile));
      if (earlier) {
        log(`${plan.runDir} held an earlier run (${earlier.moved.join(', ')}): moved it to ${earlier.dir}; this run starts at step 1`);
      }
    }
    const firstStep = plan.resume ? plan.resume.step + 1 : 1;
    const run = await this.setup({
      runDir: plan.runDir,
      runDirKey,
      signal: options.signal,
      log,
      resumeFrom: plan.resume?.checkpoint,
    });
    try {
      const last = this.config.trainer.steps;
      if (plan.resume && firstStep > last) {
        log(`nothing to train: the checkpoint is at step ${firstStep - 1} and trainer.steps is ${last} (raise it to go on)`);
      }
      if (this.config.eval.atStart && firstStep === 1 && this.hasTaps('evaluate')) await this.evaluateAt(run, 0);
      for (let step = firstStep; step <= last; step++) {
        if (run.signal.aborted) {
          run.log(`stopping before step ${step}: ${String(run.signal.reason ?? 'interrupted')}`);
          break;
        }
        await this.step(run, step, step === last);
      }
    } catch (error) {
      this.hooks.failed.call(error as Error, 'run');
      throw error;
    } finally {
      await this.hooks.shutdown.promise();
    }
    return run;
  }

  /** One training step through the hooks; returns its metrics (also handed to every MetricsSink). */
  async step(run: RunContext, step: number, isLast = false): Promise<StepResult> {
    const metrics: Metrics = {};
    const context: StepContext = { run, step, metrics, distributions: {} };
    this.timing.attach(metrics);
    this.activeStep = step;
    const started = performance.now();
    try {
      await this.hooks.beforeStep.promise(context);
      let rollout = await this.rollouts.next(context);
      rollout = await this.hooks.afterRollout.promise(rollout, context);
      rollout = await this.hooks.reward.promise(rollout, context);
      const batch = TrainingBatch.fromTrajectories(rollout.trajectories);
      await this.hooks.advantage.promise(batch, context);
      const phaseOwned = this.hasTaps('updatePhase') && (await this.hooks.updatePhase.promise(batch, context)) === true;
      if (!phaseOwned) for (const group of batch.workerGroups()) await this.hooks.update.promise(group, context);
      const result: StepResult = { step, rollout, batch, metrics, context };
      await this.hooks.afterStep.promise(result);
      const { every, atEnd } = this.config.eval;
      if (this.hasTaps('evaluate') && ((every > 0 && step % every === 0) || (atEnd && isLast))) {
        await this.hooks.evaluate.promise({ run, step, metrics });
      }
      Object.assign(metrics, processMemory());
      metrics['timing/step'] = Math.round(performance.now() - started) / 1000;
      for (const sink of this.getAll(MetricsSink)) await sink.write({ step, metrics });
      return result;
    } finally {
      this.timing.attach(undefined);
      this.activeStep = undefined;
    }
  }

  /** Runs the `evaluate` hook once, outside training (`drmas eval`); the folder defaults to `<trainer.outputDir>/eval-<time>`. */
  async evaluate(options: Omit<RunOptions, 'resume'> & { step?: number } = {}): Promise<Metrics> {
    const runDir = planEvaluation({ cwd: this.cwd, config: this.config, runDir: options.runDir });
    const runDirKey = options.runDir ? '--run-dir' : 'trainer.outputDir';
    const run = await this.setup({ runDir, runDirKey, signal: options.signal, log: options.log });
    try {
      return await this.evaluateAt(run, options.step ?? 0);
    } catch (error) {
      this.hooks.failed.call(error as Error, 'run');
      throw this.secrets.redactError(error);
    } finally {
      await this.shutdown();
    }
  }

  /**
   * Claims the run directory through the run-directory plugin's `RunDirectoryLock` (none bound: nothing to claim); a
   * claim of the folder held already (`run` claims before it moves an earlier run aside, then calls `setup`) is none.
   */
  private claimRunDir(runDir: string, key: string, log: (message: string) => void): void {
    const lock = this.getAll(RunDirectoryLock)[0];
    if (!lock) return;
    try {
      lock.claim(path.resolve(this.cwd, runDir), key, log);
    } catch (error) {
      throw DrmasError.is(error) ? error.locatedIn(this.locate(key)) : error;
    }
  }

  private releaseRunDir(): void {
    this.getAll(RunDirectoryLock)[0]?.release();
  }

  /**
   * A run with nothing that samples episodes (an empty config, or one whose plugins tap no `rollout`) is stopped
   * before anything is set up, naming the config file.
   */
  private checkRolloutProducer(): void {
    if (this.hasTaps('rollout') || this.config.trainer.steps === 0) return;
    const source = this.configFile ?? 'the config';
    throw new DrmasError(
      'NO_ROLLOUT',
      `nothing in ${source} produces rollouts: no preset or plugin it lists taps the rollout hook (presets: [${this.config.presets.join(', ')}], plugins: [${this.config.plugins.join(', ')}])`,
      {
        key: 'presets',
        file: this.configFile,
        hint: 'add a preset, e.g. "presets": ["math"], or a plugin whose rollout tap samples episodes (see examples/custom-plugin)',
      },
    );
  }

  /**
   * A run whose `update` (or `updatePhase`) taps would only ever see zero advantages is a config mistake: neither `algorithm.advantage`
   * nor any `agents.<role>.advantage` names an estimator, nor does a plugin tap the `advantage` hook.
   */
  private checkAdvantages(): void {
    if (!(this.hasTaps('update') || this.hasTaps('updatePhase')) || this.config.algorithm.advantage) return;
    if (Object.values(this.config.agents).some((agent) => agent.advantage !== undefined)) return;
    if (this.tapsOf('advantage').some((tap) => tap.name !== ADVANTAGE_PLUGIN_NAME)) return;
    throw new DrmasError(
      'CONFIG_INVALID',
      'nothing computes advantages: algorithm.advantage is not set and no plugin taps the advantage hook, so every update would see zero advantages',
      {
        key: 'algorithm.advantage',
        file: this.configFile,
        hint: 'set algorithm.advantage to an estimator (drmas, grpo, ...; `drmas info` lists them), or add a plugin that taps kernel.hooks.advantage',
      },
    );
  }

  /** One evaluation outside the step loop (before training, or eval-only), written to the metrics sinks. */
  private async evaluateAt(run: RunContext, step: number): Promise<Metrics> {
    const metrics: Metrics = {};
    this.timing.attach(metrics);
    this.activeStep = step;
    try {
      await this.hooks.evaluate.promise({ run, step, metrics });
      for (const sink of this.getAll(MetricsSink)) await sink.write({ step, metrics });
      return metrics;
    } finally {
      this.timing.attach(undefined);
      this.activeStep = undefined;
    }
  }

  /**
   * The run context `setup` gives the hooks; also, without `setup` (nothing claimed or set up), that of a process that
   * only drives engines: a rollout worker, the gateway, a command that opens one model.
   */
  runContext(options: SetupOptions): RunContext {
    return {
      config: this.config,
      container: this.container,
      runDir: options.runDir,
      runDirKey: options.runDirKey,
      resumeFrom: options.resumeFrom,
      signal: options.signal ?? new AbortController().signal,
      memoryBudget: resolveMemoryBudget(this.config, this),
      log: this.redactedLog(options.log),
    };
  }

  /** `log` (default: standard error) with the run's credentials redacted from every message. */
  private redactedLog(log: (message: string) => void = logToStderr): (message: string) => void {
    return (message) => log(this.secrets.redact(message));
  }

  /**
   * What `apply` of one plugin gets: the kernel's hooks, config and lookups. The kernel's other members are read-only
   * traps naming the plugin and what to use instead, so a plugin written against the whole kernel fails with a
   * message rather than an `undefined`.
   */
  private applyContext(loaded: LoadedPlugin): ApplyContext {
    const config = () => this.config;
    const context: ApplyContext = {
      hooks: this.hooks,
      get config() {
        return config();
      },
      cwd: this.cwd,
      configFile: this.configFile,
      inject: (dependencies) => this.inject(dependencies, `plugin ${loaded.plugin.name}`),
      get: (key, request) => this.get(key, request),
      getAll: (key) => this.getAll(key),
      getNamed: (token, name, key) => this.getNamed(token, name, key),
      namesOf: (token) => this.namesOf(token),
      absentProviders: (token, name) => this.absentProviders(token, name),
      tapsOf: (hook) => this.tapsOf(hook),
      originOf: (key) => this.originOf(key),
      agents: this.applyAgents(loaded),
    };
    for (const [member, instead] of Object.entries(KERNEL_ONLY)) {
      Object.defineProperty(context, member, {
        get: () => {
          throw new DrmasError(
            'PLUGIN_INVALID',
            `apply() reads kernel.${member}, but apply gets the kernel's hooks, config and lookups (ApplyContext), not the whole kernel`,
            { key: loaded.key, file: loaded.listedIn, hint: instead },
          );
        },
      });
    }
    return Object.freeze(context);
  }

  /** The agent registry as `apply` sees it: agents are created from it; classes are registered in `register(ctx)`. */
  private applyAgents(loaded: LoadedPlugin): ApplyContext['agents'] {
    const { agents } = this;
    const view = {
      create: agents.create.bind(agents),
      has: agents.has.bind(agents),
      names: agents.names.bind(agents),
      origin: agents.origin.bind(agents),
      resolve: agents.resolve.bind(agents),
    };
    Object.defineProperty(view, 'register', {
      get: () => {
        throw new DrmasError('PLUGIN_INVALID', 'apply() registers an agent class: agent classes are registered before apply', {
          key: loaded.key,
          file: loaded.listedIn,
          hint: 'register agent classes in register(ctx) with ctx.agents.register',
        });
      },
    });
    return Object.freeze(view);
  }

  private registerContext(plugin: string, options: ContainerModuleLoadOptions): RegisterContext {
    const { ledger, agents } = this;
    const readConfig = () => this.config;
    return {
      plugin,
      get config() {
        return readConfig();
      },
      bind: <T>(key: ServiceKey<T>) => {
        ledger.record({ key, plugin });
        return options.bind<T>(serviceIdentifier(key));
      },
      provide: <T, Provided = T>(token: Token<T, Provided>, name: string, value: T | Provided) => {
        ledger.record({ key: token, name, plugin });
        const { adapt } = token;
        if (adapt) {
          const warn = this.warn;
          options
            .bind<T>(token.id)
            .toDynamicValue(() => adapt(value as Provided, name, warn))
            .inSingletonScope()
            .whenNamed(name);
        } else
          options
            .bind<T>(token.id)
            .toConstantValue(value as T)
            .whenNamed(name);
      },
      isBound: (key) => options.isBound(serviceIdentifier(key)),
      agents: {
        register: (nameOrClass: string | AgentConstructor, target?: AgentConstructor) => {
          if (typeof nameOrClass === 'string') agents.register(nameOrClass, target, plugin);
          else agents.register(nameOrClass, plugin);
        },
      },
    };
  }

  private guard(loaded: LoadedPlugin, phase: 'register' | 'apply', action: () => void): void {
    try {
      action();
    } catch (cause) {
      if (DrmasError.is(cause) && cause.code !== 'RUN_FAILED') {
        throw new DrmasError(cause.code, `plugin "${loaded.plugin.name}" (${loaded.key}): ${cause.message}`, {
          key: cause.key ?? loaded.key,
          file: cause.file ?? loaded.listedIn,
          hint: cause.hint,
          cause,
        });
      }
      throw new DrmasError(
        'PLUGIN_FAILED',
        `plugin "${loaded.plugin.name}" threw in ${phase}(): ${(cause as Error)?.message ?? String(cause)}`,
        {
          key: loaded.key,
          file: loaded.listedIn,
          cause,
          hint: `the plugin comes from ${loaded.resolvedFrom}; check its options at ${loaded.key}, or run with --verbose for the stack`,
        },
      );
    }
  }
}
