import * as tf from '@tensorflow/tfjs-core';
import { didYouMean, DrmasError } from '@drmas/core';
import { installWasmSliceKernels } from './wasmSliceKernels.js';

/** A way to run tfjs: a module that registers a backend, and the tfjs backend name it registers. */
export interface RuntimeCandidate {
  name: string;
  /** Higher is tried first by `auto`. */
  priority: number;
  /** The tfjs backend name it registers (`tensorflow`, `wasm`, `cpu`). */
  backend: string;
  /** Loads what the runtime needs and activates it; returns a description for logs. Throws when unavailable. */
  initialize(): Promise<string>;
}

export interface SelectedRuntime {
  name: string;
  /** For logs and `drmas info`, e.g. `wasm (simd, 1 thread)`. */
  description: string;
}

/** No requested runtime could start. Lists why each candidate failed. */
export class RuntimeUnavailableError extends DrmasError {
  readonly failures: { name: string; reason: string }[];

  constructor(requested: string, failures: { name: string; reason: string }[], hint?: string) {
    super(
      'RUNTIME_UNAVAILABLE',
      `no tfjs runtime available for '${requested}':\n${failures.map((f) => `  - ${f.name}: ${f.reason}`).join('\n')}`,
      {
        hint:
          hint ??
          (requested === 'auto'
            ? 'install a runtime: npm install @tensorflow/tfjs-node (or @tensorflow/tfjs-backend-wasm)'
            : "install the runtime's package, or ask for auto to fall back to the next runtime that starts"),
      },
    );
    this.failures = failures;
  }
}

/** Imports an optional module by a name the compiler does not resolve (it may not be installed). */
async function importOptional(specifier: string): Promise<Record<string, unknown>> {
  return (await import(specifier)) as Record<string, unknown>;
}

/**
 * Registers tfjs-core's gradients, which training needs. tfjs-core's Node build does not register them (its
 * `register_all_gradients` module is ESM in a CommonJS package, which Node cannot load); tfjs-layers' Node bundle
 * carries them all and registers them when imported, as the `@tensorflow/tfjs` umbrella does.
 */
async function registerGradients(): Promise<void> {
  await import('@tensorflow/tfjs-layers');
}

async function activate(backend: string): Promise<void> {
  if (!(await tf.setBackend(backend))) throw new Error(`tf.setBackend('${backend}') failed`);
  await tf.ready();
}

export function builtinRuntimeCandidates(): RuntimeCandidate[] {
  return [
    {
      name: 'tfjs-node-gpu',
      backend: 'tensorflow',
      priority: 40,
      async initialize() {
        await importOptional('@tensorflow/tfjs-node-gpu');
        await activate('tensorflow');
        return 'tfjs-node-gpu (libtensorflow, CUDA)';
      },
    },
    {
      name: 'tfjs-node',
      backend: 'tensorflow',
      priority: 30,
      async initialize() {
        await importOptional('@tensorflow/tfjs-node');
        await activate('tensorflow');
        return 'tfjs-node (libtensorflow, CPU)';
      },
    },
    {
      name: 'wasm',
      backend: 'wasm',
      priority: 20,
      async initialize() {
        const wasm = await importOptional('@tensorflow/tfjs-backend-wasm');
        await activate('wasm');
        installWasmSliceKernels();
        const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
        const threads = typeof wasm.getThreadsCount === 'function' ? (wasm.getThreadsCount as () => number)() : 1;
        return `wasm (${simd ? 'simd' : 'no simd'}, ${threads} thread${threads === 1 ? '' : 's'})`;
      },
    },
    {
      name: 'cpu',
      backend: 'cpu',
      priority: 10,
      async initialize() {
        await import('@tensorflow/tfjs-backend-cpu');
        await activate('cpu');
        return 'cpu (plain JavaScript)';
      },
    },
  ];
}

/**
 * Picks the tfjs runtime. tfjs has one active backend per process, so the selection is process-wide: every
 * model in the process runs on the runtime selected last. Candidates are initialised lazily, at most once each.
 */
export class RuntimeSelector {
  private readonly candidates = new Map<string, RuntimeCandidate>();
  private readonly initialized = new Map<string, Promise<string>>();
  private current: SelectedRuntime | undefined;
  private gradients: Promise<void> | undefined;

  constructor(candidates: RuntimeCandidate[] = builtinRuntimeCandidates()) {
    for (const c of candidates) this.register(c);
  }

  register(candidate: RuntimeCandidate): void {
    this.candidates.set(candidate.name, candidate);
  }

  get names(): string[] {
    return [...this.candidates.values()].sort((a, b) => b.priority - a.priority).map((c) => c.name);
  }

  /** The runtime chosen so far, if any. */
  get selected(): SelectedRuntime | undefined {
    return this.current;
  }

  async select(requested = 'auto'): Promise<SelectedRuntime> {
    if (requested === 'auto' && this.current) return this.current;
    if (requested !== 'auto' && !this.candidates.has(requested)) {
      throw new RuntimeUnavailableError(
        requested,
        [{ name: requested, reason: `unknown runtime; known: auto, ${this.names.join(', ')}` }],
        `pick a known runtime, or auto.${didYouMean(requested, this.names)}`,
      );
    }
    this.gradients ??= registerGradients();
    await this.gradients;
    const order = requested === 'auto' ? this.names : [requested];
    const failures: { name: string; reason: string }[] = [];
    for (const name of order) {
      try {
        const description = await this.initialize(name);
        if (this.current?.name !== name) await activate(this.candidates.get(name)!.backend);
        this.current = { name, description };
        return this.current;
      } catch (err) {
        failures.push({ name, reason: (err as Error).message.split('\n')[0]! });
      }
    }
    throw new RuntimeUnavailableError(requested, failures);
  }

  private initialize(name: string): Promise<string> {
    let pending = this.initialized.get(name);
    if (!pending) {
      pending = this.candidates.get(name)!.initialize();
      this.initialized.set(name, pending);
    }
    return pending;
  }
}

let shared: RuntimeSelector | undefined;

/** The process-wide selector (tfjs's active backend is process-wide). */
export function runtimeSelector(): RuntimeSelector {
  shared ??= new RuntimeSelector();
  return shared;
}

/** Selects (once) and activates a runtime: `'auto'` tries tfjs-node-gpu, tfjs-node, wasm, cpu in that order. */
export function selectRuntime(requested = 'auto'): Promise<SelectedRuntime> {
  return runtimeSelector().select(requested);
}
