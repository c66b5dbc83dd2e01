/**
 * glibc's mmap threshold the `drmas` command runs under (`MALLOC_MMAP_THRESHOLD_`, bytes): blocks of 4 MiB and more
 * are mapped and returned to the system when freed. glibc otherwise raises its threshold to the size of each large
 * block freed (up to 32 MiB), after which onnxruntime's tensors of a few MiB come from the heap and stay resident
 * (the large models' sessions run without onnxruntime's arena): sampling 16 rows x 200 prompt tokens on Qwen3-0.6B
 * peaked 1.0-4.4 GiB higher under glibc's default (bench/RESULTS.md, "Sampling's resident memory and glibc's malloc").
 * glibc reads it only when a process starts, so the command replaces itself with a copy started with it set.
 */
export const MALLOC_MMAP_THRESHOLD = 4 * 2 ** 20;

/** Whether this process runs on glibc with its mmap threshold unset and the user has not opted out (`DRMAS_MALLOC=glibc`). */
export function wantsMallocThreshold(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform !== 'linux') return false;
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || env.DRMAS_MALLOC === 'glibc') return false;
  if (env.GLIBC_TUNABLES?.includes('glibc.malloc.mmap_threshold')) return false;
  // Node's report header names the glibc it runs on (`glibcVersionRuntime`), absent on musl; typed only as object.
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  return report.header?.glibcVersionRuntime !== undefined;
}

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/** `process.execve` (Node 22.15, 23.11 and later), where this Node has it. */
export function processExecve(): Execve | undefined {
  const execve: unknown = Reflect.get(process, 'execve');
  return typeof execve === 'function' ? (execve.bind(process) as Execve) : undefined;
}

/**
 * Replaces this process with `script` run again on the same Node with the same flags and `argv`, under
 * `MALLOC_MMAP_THRESHOLD`: the same pid, stdio, signals and exit. Returns (doing nothing) where Node cannot replace
 * its process: older Node keeps glibc's threshold rather than run the command as two processes, whose signals and
 * kills a user's tools would have to reach both.
 */
export function relaunchWithMallocThreshold(script: string, argv: readonly string[]): void {
  const execve = processExecve();
  if (!execve) return;
  const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: String(MALLOC_MMAP_THRESHOLD) };
  execve(process.execPath, [process.execPath, ...process.execArgv, script, ...argv], env);
}
