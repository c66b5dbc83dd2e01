// PyTorch's builds, BLAS and thread settings on this machine, for bench/run.mjs to measure and pick the fastest of.
// Debian's torch 1.13 (/usr/bin/python3) calls BLAS through libblas.so.3 (`torch.__config__.show()`:
// BLAS_INFO=generic), which the alternatives system points at an installed OpenBLAS build; OpenBLAS picks its kernels
// from the CPU unless OPENBLAS_CORETYPE names a set (an environment may force Haswell's AVX2 kernels on an AVX-512
// CPU). PyPI's torch 2.15 (the trl environment of scripts/python-env.sh) carries MKL and oneDNN: its settings are
// its intra-op threads and float32 or bf16 autocast, whose products run on oneDNN's bf16 kernels where the CPU has
// avx512_bf16 or AMX.
import { existsSync, readFileSync } from 'node:fs';
import { median } from './workloads.mjs';

const LIB = '/usr/lib/x86_64-linux-gnu';
/** Debian's OpenBLAS builds: the pthread one (libopenblas0-pthread) and the OpenMP one (libopenblas0-openmp). */
export const OPENBLAS_BUILDS = { pthread: `${LIB}/openblas-pthread`, openmp: `${LIB}/openblas-openmp` };

/**
 * The grid (`full`): OpenBLAS's kernels (Haswell's AVX2, its own choice, SkylakeX's AVX-512) x torch's intra-op
 * threads (1, cores) x OpenBLAS's threads (1, cores) on the pthread build, and the OpenMP build (whose threads are
 * torch's OpenMP threads) with its own kernel choice x intra-op threads. `kernels`: the kernel sets only, one thread
 * each (the fastest threads under heavy load from other processes). Settings whose build is not installed are listed
 * as unavailable.
 */
export function torchSettings(cores, grid = 'full', { debian = true, pypiPython } = {}) {
  if (grid !== 'full' && grid !== 'kernels') throw new Error(`bench: --torch-grid is full or kernels, not ${grid}`);
  const threads = grid === 'full' ? [...new Set([1, cores])] : [1];
  const available = [];
  const unavailable = [];
  const add = (setting) => {
    if (!debian) return;
    const dir = OPENBLAS_BUILDS[setting.build];
    if (existsSync(dir)) available.push(setting);
    else if (!unavailable.some((u) => u.includes(setting.build)))
      unavailable.push(
        `PyTorch on OpenBLAS's ${setting.build} build not measured: ${dir} is absent (apt-get install libopenblas0-${setting.build})`,
      );
  };
  for (const coretype of ['Haswell', undefined, 'SkylakeX'])
    for (const intraOpThreads of threads)
      for (const openblasThreads of threads) add(setting({ build: 'pthread', coretype, intraOpThreads, openblasThreads }));
  if (grid === 'full')
    for (const intraOpThreads of threads)
      add(setting({ build: 'openmp', coretype: undefined, intraOpThreads, openblasThreads: undefined }));
  if (!debian)
    unavailable.push(`Debian's torch not measured: /usr/bin/python3 has no torch (sudo bash scripts/install-test-deps.sh torch)`);
  if (pypiPython)
    for (const intraOpThreads of threads)
      for (const dtype of bf16Capable() ? ['fp32', 'bf16'] : ['fp32'])
        available.push({
          build: 'pypi',
          python: pypiPython,
          intraOpThreads,
          dtype,
          label: `PyPI torch, intra-op ${intraOpThreads}, ${dtype === 'bf16' ? 'bf16 autocast' : 'float32'}`,
        });
  else unavailable.push("PyPI's torch not measured: its environment is not installed (bash scripts/python-env.sh trl)");
  return { available, unavailable };
}

/** Whether the CPU has bf16 matrix instructions (AVX-512 BF16 or AMX), where oneDNN's bf16 path is worth a try. */
export function bf16Capable() {
  const flags = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '';
  return /\b(avx512_bf16|amx_bf16)\b/.test(flags);
}

function setting(s) {
  const parts = [
    `OpenBLAS ${s.build}`,
    `OPENBLAS_CORETYPE=${s.coretype ?? 'unset'}`,
    `intra-op ${s.intraOpThreads}`,
    s.openblasThreads === undefined ? 'OpenBLAS threads = OpenMP threads' : `OpenBLAS threads ${s.openblasThreads}`,
  ];
  return { ...s, label: parts.join(', ') };
}

/**
 * The child environment of a setting: the build's directory first on the library path (libblas.so.3 then resolves to
 * it), OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS as the setting says (undefined removes what this process inherited).
 */
export function settingEnv(s) {
  if (s.build === 'pypi') return {};
  const libraryPath = [OPENBLAS_BUILDS[s.build], process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  return {
    LD_LIBRARY_PATH: libraryPath,
    OPENBLAS_CORETYPE: s.coretype,
    OPENBLAS_NUM_THREADS: s.openblasThreads === undefined ? undefined : String(s.openblasThreads),
  };
}

/** The setting with the highest median `key` over the probe records of `bench` (undefined without any). */
export function fastestSetting(settings, probes, bench, key) {
  let best;
  let bestValue = -Infinity;
  for (const s of settings) {
    const values = probes.filter((p) => p.setting === s.label && p.bench === bench).map((p) => p[key]);
    if (values.length === 0) continue;
    const value = median(values);
    if (value > bestValue) [best, bestValue] = [s, value];
  }
  return best;
}
