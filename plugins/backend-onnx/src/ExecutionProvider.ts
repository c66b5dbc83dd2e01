import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { DrmasError } from '@drmas/core';
import { OnnxRuntimeUnavailableError } from './OnnxBackendErrors.js';
import { GraphBuilder } from './onnx/GraphBuilder.js';
import type * as OrtModule from 'onnxruntime-node';

export type Ort = typeof OrtModule;
export type ProviderName = 'cpu' | 'cuda' | 'webgpu';
export type ProviderRequest = ProviderName | 'auto';
export const PROVIDER_REQUESTS = ['cpu', 'cuda', 'webgpu', 'auto'] as const satisfies readonly ProviderRequest[];

/** The onnxruntime-node release this package is built and tested against: its optional peer dependency. */
export const ONNXRUNTIME_VERSION = '1.30.0';
/** Installs onnxruntime-node for the CPU, without the download of CUDA providers its install script makes by default. */
export const ONNXRUNTIME_INSTALL = `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@${ONNXRUNTIME_VERSION}`;

let ortPromise: Promise<Ort> | undefined;

/**
 * onnxruntime-node 1.30's own switch for its telemetry, which otherwise keeps a device id and an event database under
 * `~/.cache/Microsoft/DeveloperTools/.onnxruntime`, uploads where it can, and leaves `/tmp/mat-debug-<pid>.log`.
 */
const ORT_TELEMETRY_ENV = 'ORT_DISABLE_TELEMETRY';

/**
 * onnxruntime-node, loaded on first use (its native library is not touched at import time); rejects with
 * `OnnxRuntimeUnavailableError` when it is not installed or does not load, and keeps that answer. Its telemetry is
 * off unless `ORT_DISABLE_TELEMETRY` is set already (`0` keeps it on).
 */
export function loadOnnxRuntime(): Promise<Ort> {
  if (!ortPromise) {
    process.env[ORT_TELEMETRY_ENV] ??= '1';
    ortPromise = import('onnxruntime-node').then(
      (m) => (m as unknown as { default?: Ort }).default ?? m,
      (cause: unknown) => {
        throw new OnnxRuntimeUnavailableError(cause, ONNXRUNTIME_INSTALL);
      },
    );
  }
  return ortPromise;
}

/** Whether an execution provider can run here, and why not. */
export interface ProviderAvailability {
  available: boolean;
  /** Why not, when not. */
  reason?: string;
}

/** The folder holding onnxruntime-node's native binding and the provider libraries its installer downloads. */
function nativeLibraryDir(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('onnxruntime-node/package.json'));
  return join(pkg, 'bin', 'napi-v6', process.platform, process.arch);
}

const CUDA_LIBRARY = process.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so';

/**
 * Whether onnxruntime-node can run the CUDA execution provider here: the binding must be built with it and the
 * provider library (installed with `onnxruntime-node-install=cuda12`) must be present. A library that is present
 * but cannot load (no CUDA 12 / cuDNN 9 on the machine) shows up when the session is created.
 */
export async function detectCuda(): Promise<ProviderAvailability> {
  const ort = await loadOnnxRuntime();
  const supported = ort.listSupportedBackends?.() ?? [];
  if (!supported.some((b) => b.name === 'cuda')) {
    return { available: false, reason: `this onnxruntime-node build (${process.platform}-${process.arch}) has no CUDA support` };
  }
  const library = join(nativeLibraryDir(), CUDA_LIBRARY);
  if (!existsSync(library)) {
    return { available: false, reason: `the CUDA provider library is not installed (${library} is missing)` };
  }
  return { available: true };
}

export const CUDA_INSTALL_HINT = `to use CUDA, run ONNXRUNTIME_NODE_INSTALL=cuda12 npm install onnxruntime-node@${ONNXRUNTIME_VERSION} on a machine with internet, CUDA 12 and cuDNN 9`;
export const WEBGPU_INSTALL_HINT =
  "to use WebGPU, install a Vulkan driver for the GPU: on Debian libvulkan1 and the GPU vendor's driver; Mesa's lavapipe, a software device, runs it on the CPU (bash scripts/install-test-deps.sh vulkan)";

/**
 * Whether onnxruntime-node's WebGPU execution provider (Dawn, over Vulkan on Linux) finds an adapter here: a one-node
 * graph is run on it alone. Why not, in Dawn's words, when not.
 */
export async function detectWebGpu(): Promise<ProviderAvailability> {
  const ort = await loadOnnxRuntime();
  if (!(ort.listSupportedBackends?.() ?? []).some((b) => b.name === 'webgpu')) {
    return { available: false, reason: `this onnxruntime-node build (${process.platform}-${process.arch}) has no WebGPU support` };
  }
  const g = new GraphBuilder('drmas-webgpu-probe');
  g.output(g.op('MatMul', [g.input('x', 'float', [1, 1]), g.input('y', 'float', [1, 1])]), 'z', 'float', [1, 1]);
  try {
    const session = await ort.InferenceSession.create(g.toModelProto(), { executionProviders: ['webgpu'] });
    const one = new ort.Tensor('float32', Float32Array.of(1), [1, 1]);
    await session.run({ x: one, y: one });
    await session.release();
    return { available: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // onnxruntime's message starts with its source location and the failed check: keep Dawn's sentence where it is there.
    const reason = /Failed to get a WebGPU adapter[^\n]*/.exec(message)?.[0] ?? message.split('\n')[0]!;
    return { available: false, reason: reason.trim() };
  }
}

/** An execution provider drmas runs its graphs on, by name. */
interface ExecutionProviderEntry {
  readonly name: ProviderName;
  /** `auto`'s order (higher first); absent: taken only when named. */
  readonly autoPriority?: number;
  /** onnxruntime's `executionProviders` for a session on it: nodes it lacks run on the CPU. */
  readonly sessionProviders: readonly string[];
  /** Whether the policy's training graphs run on it too, else on the CPU (critics train on the CPU either way). */
  readonly trains: boolean;
  readonly detect: () => Promise<ProviderAvailability>;
  readonly installHint: string;
  readonly label: string;
}

/**
 * The providers, best first. `auto` takes CUDA where its library is installed, else the CPU; never WebGPU, which
 * onnxruntime cannot tell on a GPU from on a software device (lavapipe runs it, slower than the CPU engine). CUDA's
 * training is untested (no GPU here), so its updates stay on the CPU; WebGPU's training graphs are tested against
 * the CPU's (`test/webgpuProvider.test.ts`).
 */
const EXECUTION_PROVIDERS: readonly ExecutionProviderEntry[] = [
  {
    name: 'cuda',
    autoPriority: 20,
    sessionProviders: ['cuda', 'cpu'],
    trains: false,
    detect: () => detectCuda(),
    installHint: CUDA_INSTALL_HINT,
    label: 'CUDA',
  },
  {
    name: 'webgpu',
    sessionProviders: ['webgpu', 'cpu'],
    trains: true,
    detect: () => detectWebGpu(),
    installHint: WEBGPU_INSTALL_HINT,
    label: 'WebGPU',
  },
  {
    name: 'cpu',
    autoPriority: 0,
    sessionProviders: ['cpu'],
    trains: true,
    detect: async () => ({ available: true }),
    installHint: '',
    label: 'CPU',
  },
];

function providerEntry(name: ProviderName): ExecutionProviderEntry {
  return EXECUTION_PROVIDERS.find((entry) => entry.name === name)!;
}

export interface ResolvedProvider {
  provider: ProviderName;
  requested: ProviderRequest;
  /** Set when a provider was asked for explicitly and the engine fell back to CPU. */
  fallbackReason?: string;
}

/** Validates a `provider` setting. */
export function parseProviderRequest(value: unknown, key = 'provider'): ProviderRequest {
  if (value === undefined || value === null) return 'auto';
  if (typeof value === 'string' && (PROVIDER_REQUESTS as readonly string[]).includes(value)) return value as ProviderRequest;
  throw new DrmasError('CONFIG_INVALID', `unknown onnxruntime execution provider ${JSON.stringify(value)}`, {
    key,
    hint: `use one of ${PROVIDER_REQUESTS.join(', ')}`,
  });
}

/** Why a provider cannot run here (undefined: it can); asked once per provider and process unless `detect` is given. */
const availability = new Map<ProviderName, Promise<ProviderAvailability>>();
function detected(entry: ExecutionProviderEntry): Promise<ProviderAvailability> {
  let answer = availability.get(entry.name);
  if (!answer) availability.set(entry.name, (answer = entry.detect()));
  return answer;
}

/**
 * Picks the execution provider: a named one when it can run here, else the CPU with a warning through `warn` saying
 * why and how to get it; `auto` the first available of `auto`'s order (CUDA, then the CPU), without a warning.
 * `detect` replaces a provider's detection (tests).
 */
export async function resolveProvider(
  requested: ProviderRequest,
  warn: (message: string) => void,
  detect: (provider: ProviderName) => Promise<ProviderAvailability> | undefined = () => undefined,
): Promise<ResolvedProvider> {
  const availableHere = (entry: ExecutionProviderEntry) => detect(entry.name) ?? detected(entry);
  if (requested === 'auto') {
    const order = EXECUTION_PROVIDERS.filter((e) => e.autoPriority !== undefined).sort((a, b) => b.autoPriority! - a.autoPriority!);
    for (const entry of order) if ((await availableHere(entry)).available) return { provider: entry.name, requested };
    return { provider: 'cpu', requested };
  }
  const entry = providerEntry(requested);
  const answer = await availableHere(entry);
  if (answer.available) return { provider: entry.name, requested };
  const fallbackReason = `${entry.label} was requested but is unavailable: ${answer.reason}`;
  warn(`onnx backend: ${fallbackReason}; falling back to the CPU execution provider (${entry.installHint})`);
  return { provider: 'cpu', requested, fallbackReason };
}

/** Whether the training graphs run on `provider` (else on the CPU): see `EXECUTION_PROVIDERS`. */
export function trainingProvider(provider: ProviderName): ProviderName {
  return providerEntry(provider).trains ? provider : 'cpu';
}

/**
 * Session options: intra-op threads = cores (unless `extra` sets them), all graph optimizations, the chosen provider. Intra-op threads do not
 * spin while waiting for work: on a machine shared with other processes, spinning threads took the cores from the
 * thread that had work (measured 2-2.5x slower generation under a load average of 4-5 on 2 cores).
 * No memory pattern (unless `extra` asks for one, `models.<id>.memoryPattern`): onnxruntime plans and keeps an arena
 * layout per input shape, and these graphs see a new shape at nearly every call (prompt and cache lengths, micro-batch
 * rows), so the patterns only held memory: without them M-ASK with a model per agent peaks at 3.9 GiB instead of 6.2
 * at the same speed, and the math job updates faster (`npm run bench:memory-pattern`, bench/RESULTS.md).
 */
export function sessionOptions(
  provider: ProviderName,
  extra: OrtModule.InferenceSession.SessionOptions = {},
): OrtModule.InferenceSession.SessionOptions {
  return {
    executionProviders: [...providerEntry(provider).sessionProviders],
    intraOpNumThreads: availableParallelism(),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableMemPattern: false,
    // Errors only: a WebGPU session warns at every creation that some nodes run on the CPU, which is by design.
    logSeverityLevel: 3,
    ...extra,
    extra: { ...extra.extra, session: { intra_op: { allow_spinning: '0' }, ...(extra.extra?.session as object | undefined) } },
  };
}

export function describeProvider(ort: Ort, resolved: ResolvedProvider, threads = availableParallelism()): string {
  const version = ort.env.versions?.node ?? 'unknown';
  const cpu = `CPU, ${threads} thread${threads === 1 ? '' : 's'}`;
  const where = resolved.provider === 'cpu' ? cpu : providerEntry(resolved.provider).label;
  const note = resolved.fallbackReason ? ` (fell back: ${resolved.fallbackReason})` : '';
  return `onnxruntime-node ${version} (${where})${note}`;
}
