import { injectable } from 'inversify';
import { inject } from '../di/injection.js';
import { DrmasError } from '../errors/DrmasError.js';
import { Contributions } from '../services/Contributions.js';
import { AUTO_BACKEND, BackendFactory, CAPABILITY_TEXT } from './BackendFactory.js';
import type { EngineChoice, EngineRequest, Engines, EngineSkip } from './Engines.js';

type EngineLookup = Pick<Contributions, 'getNamed' | 'namesOf'>;
interface Candidate {
  name: string;
  factory: BackendFactory;
}

function registered(contributions: EngineLookup): Candidate[] {
  return contributions.namesOf(BackendFactory).map((name) => ({ name, factory: contributions.getNamed(BackendFactory, name) }));
}

/** The engines `auto` tries for `settings`: those with a priority, highest first, in registration order among equals. */
function byPriority(contributions: EngineLookup, settings: Record<string, unknown>): Candidate[] {
  return registered(contributions)
    .map((candidate) => ({ ...candidate, rank: candidate.factory.priority?.(settings) }))
    .filter((c): c is Candidate & { rank: number } => c.rank !== undefined)
    .sort((a, b) => b.rank - a.rank);
}

/** Why `factory` cannot serve `request` as far as its declarations tell (no probe): a capability it lacks, or its refusal. */
function unfitness(factory: BackendFactory, request: Pick<EngineRequest, 'needs' | 'settings'>): string | undefined {
  const lacking = request.needs.filter((need) => !factory.capabilities.includes(need));
  if (lacking.length) return `cannot ${lacking.map((need) => CAPABILITY_TEXT[need]).join(' or ')}`;
  const refusal = factory.refuses?.(request.settings);
  return refusal === undefined ? undefined : `refuses this model: ${refusal}`;
}

/** `key` given `value`, as the user would write it: `--engine onnx`, `models.policy.backend: onnx`. */
function assignment(key: string, value: string): string {
  return key.startsWith('--') ? `${key} ${value}` : `${key}: ${value}`;
}

function errorCode(key: string): 'INVALID_ARGUMENT' | 'CONFIG_INVALID' {
  return key.startsWith('--') ? 'INVALID_ARGUMENT' : 'CONFIG_INVALID';
}

/**
 * The engines `auto` would try for `request`, best first, without loading anything: those with a priority that do
 * everything it needs and accept its settings.
 */
export function rankEngines(contributions: EngineLookup, request: Pick<EngineRequest, 'needs' | 'settings'>): string[] {
  return byPriority(contributions, request.settings)
    .filter(({ factory }) => unfitness(factory, request) === undefined)
    .map((c) => c.name);
}

/**
 * The engine that will train a model with `settings` as far as load time can tell: its `backend`, or for `auto` the
 * engine ranked first (which one loads is known only at setup); undefined when none is registered.
 */
export function expectedTrainingFactory(contributions: EngineLookup, settings: Record<string, unknown>): BackendFactory | undefined {
  const backend = settings.backend as string;
  const name = backend === AUTO_BACKEND ? rankEngines(contributions, { needs: ['train'], settings })[0] : backend;
  return name !== undefined && contributions.namesOf(BackendFactory).includes(name)
    ? contributions.getNamed(BackendFactory, name)
    : undefined;
}

/** The engine service over the kernel's `BackendFactory` contributions (see `Engines`). */
@injectable()
export class EngineService implements Engines {
  constructor(@inject(Contributions) private readonly contributions: Contributions) {}

  names(): string[] {
    return this.contributions.namesOf(BackendFactory);
  }

  get(name: string, key: string): BackendFactory {
    return this.contributions.getNamed(BackendFactory, name, key);
  }

  ranked(request: Pick<EngineRequest, 'needs' | 'settings'>): string[] {
    return rankEngines(this.contributions, request);
  }

  describe(name: string, settings: Record<string, unknown>): string {
    const location = this.names().includes(name) ? this.get(name, 'models.<id>.backend').location?.(settings) : undefined;
    return location ? `${name} at ${location}` : name;
  }

  select(request: EngineRequest): Promise<EngineChoice> {
    const name = request.name ?? AUTO_BACKEND;
    return name === AUTO_BACKEND ? this.selectAuto(request) : this.selectNamed(name, request);
  }

  private async selectNamed(name: string, request: EngineRequest): Promise<EngineChoice> {
    const factory = this.get(name, request.key);
    if (name === request.loadedOn) return { name, factory, skipped: [] };
    const unfit = unfitness(factory, request);
    const unavailable = unfit === undefined ? await factory.probe?.() : undefined;
    if (unfit === undefined && unavailable === undefined) return { name, factory, skipped: [] };
    const others = this.ranked(request).filter((other) => other !== name);
    const instead = others.length
      ? `name one that can (${others.join(', ')}), or give ${assignment(request.key, AUTO_BACKEND)} to take the best available`
      : `give ${assignment(request.key, AUTO_BACKEND)} to take the best engine available`;
    throw new DrmasError(
      errorCode(request.key),
      unfit === undefined ? `engine "${name}" is unavailable here: ${unavailable}` : `engine "${name}" ${unfit}`,
      { key: request.key, hint: unfit === undefined ? `install what is missing, or ${instead}` : instead },
    );
  }

  private async selectAuto(request: EngineRequest): Promise<EngineChoice> {
    const loaded = request.loadedOn;
    if (loaded !== undefined && this.names().includes(loaded)) {
      const factory = this.get(loaded, request.key);
      if (factory.remoteWeights) return { name: loaded, factory, skipped: [] };
    }
    const skipped: EngineSkip[] = [];
    for (const { name, factory } of byPriority(this.contributions, request.settings)) {
      if (name === loaded) return { name, factory, skipped };
      const reason = unfitness(factory, request) ?? (await factory.probe?.());
      if (reason === undefined) return { name, factory, skipped };
      skipped.push({ name, reason });
    }
    if (loaded !== undefined) return { name: loaded, factory: this.get(loaded, request.key), skipped };
    throw this.noneFits(request, skipped);
  }

  /** Every candidate and why it does not serve: those `auto` tried, those it never takes, and those not installed. */
  private noneFits(request: EngineRequest, tried: readonly EngineSkip[]): DrmasError {
    const byNameOnly: string[] = [];
    const reasons = [...tried];
    for (const { name, factory } of registered(this.contributions)) {
      if (tried.some((skip) => skip.name === name)) continue;
      const unfit = unfitness(factory, request);
      if (unfit === undefined) byNameOnly.push(name);
      reasons.push({ name, reason: unfit ?? `chosen only by name (${assignment(request.key, name)})` });
    }
    const absent = this.contributions.absentProviders(BackendFactory);
    for (const plugin of absent) {
      for (const name of Object.values(plugin.provides).flat()) {
        reasons.push({ name, reason: `not installed (${plugin.packageName}, which ${plugin.listedIn} loads where it is)` });
      }
    }
    const needs = request.needs.map((need) => CAPABILITY_TEXT[need]).join(' and ') || 'run';
    const fixes = [
      ...absent.map((plugin) => `npm i ${plugin.packageName}`),
      ...(byNameOnly.length ? [`name one at ${request.key} (${byNameOnly.join(', ')})`] : []),
    ];
    return new DrmasError(
      errorCode(request.key),
      `no engine here can ${needs} for this model${reasons.length ? ':' : ' (none is registered)'}` +
        reasons.map((skip) => `\n  - ${skip.name}: ${skip.reason}`).join(''),
      {
        key: request.key,
        hint: fixes.length ? fixes.join(', or ') : `install what a skipped engine is missing, or a plugin whose engine can ${needs}`,
      },
    );
  }
}
