import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { DrmasError } from '@drmas/core';
import { OnnxRuntimeUnavailableError } from './OnnxBackendErrors.js';
import type * as OrtModule from 'onnxruntime-node';

export type Ort = typeof OrtModule;
export type ProviderRequest = 'cpu' | 'cuda' | 'auto';
export const PROVIDER_REQUESTS: readonly ProviderRequest[] = ['cpu', 'cuda', 'auto'];

/** The onnxruntime-node release this package is built and tested against: its optional peer dependency. */
export const ONNXRUNTIME_VERSION = '1.30.0';
/** Installs onnxruntime-node for the CPU, without the download of CUDA providers its install script makes by default. */
export const ONNXRUNTIME_INSTALL = `ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@${ONNXRUNTIME_VERSION}`;

let ortPromise: Promise<Ort> | undefined;

/**
 * onnxruntime-node, loaded on first use (its native library is not touched at import time); rejects with
 * `OnnxRuntimeUnavailableError` when it is not installed or does not load, and keeps that answer.
 */
export function loadOnnxRuntime(): Promise<Ort> {
  ortPromise ??= import('onnxruntime-node').then(
    (m) => (m as unknown as { default?: Ort }).default ?? m,
    (cause: unknown) => {
      throw new OnnxRuntimeUnavailableError(cause, ONNXRUNTIME_INSTALL);
    },
  );
  return ortPromise;
}

export interface CudaAvailability {
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
export async function detectCuda(): Promise<CudaAvailability> {
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

export interface ResolvedProvider {
  provider: 'cpu' | 'cuda';
  requested: ProviderRequest;
  /** Set when CUDA was asked for explicitly and the engine fell back to CPU. */
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

/**
 * Picks the execution provider: `cpu`; `cuda` when available, else CPU with a warning through `warn`; `auto` is
 * CUDA when available, else CPU without a warning.
 */
export async function resolveProvider(
  requested: ProviderRequest,
  warn: (message: string) => void,
  detect: () => Promise<CudaAvailability> = detectCuda,
): Promise<ResolvedProvider> {
  if (requested === 'cpu') return { provider: 'cpu', requested };
  const cuda = await detect();
  if (cuda.available) return { provider: 'cuda', requested };
  if (requested === 'auto') return { provider: 'cpu', requested };
  const fallbackReason = `CUDA was requested but is unavailable: ${cuda.reason}`;
  warn(`onnx backend: ${fallbackReason}; falling back to the CPU execution provider (${CUDA_INSTALL_HINT})`);
  return { provider: 'cpu', requested, fallbackReason };
}

/**
 * Session options: intra-op threads = cores (unless `extra` sets them), all graph optimizations, the chosen provider. Intra-op threads do not
 * spin while waiting for work: on a machine shared with other processes, spinning threads took the cores from the
 * thread that had work (measured 2-2.5x slower generation under a load average of 4-5 on 2 cores).
 */
export function sessionOptions(
  provider: 'cpu' | 'cuda',
  extra: OrtModule.InferenceSession.SessionOptions = {},
): OrtModule.InferenceSession.SessionOptions {
  return {
    executionProviders: provider === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
    intraOpNumThreads: availableParallelism(),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    ...extra,
    extra: { ...extra.extra, session: { intra_op: { allow_spinning: '0' }, ...(extra.extra?.session as object | undefined) } },
  };
}

export function describeProvider(ort: Ort, resolved: ResolvedProvider, threads = availableParallelism()): string {
  const version = ort.env.versions?.node ?? 'unknown';
  const where = resolved.provider === 'cuda' ? 'CUDA' : `CPU, ${threads} thread${threads === 1 ? '' : 's'}`;
  const note = resolved.fallbackReason ? ` (fell back: ${resolved.fallbackReason})` : '';
  return `onnxruntime-node ${version} (${where})${note}`;
}
