import type { Metrics } from '../data/StepContext.js';

const GIB = 1024 ** 3;

/**
 * The process's memory at the end of a step, in GiB: resident now (`perf/cpu_memory_used_gb`, veRL's name), the most
 * it has been resident since it started (`perf/max_cpu_memory_used_gb`, where an evaluation's or an update's peak
 * shows), and how much of it is JavaScript's heap (`perf/heap_used_gb`; the rest is native: onnxruntime's arenas,
 * tfjs's tensors, buffers).
 */
export function processMemory(): Metrics {
  const { rss, heapUsed } = process.memoryUsage();
  return {
    'perf/cpu_memory_used_gb': toGiB(rss),
    // Node gives the peak in KiB (ru_maxrss).
    'perf/max_cpu_memory_used_gb': toGiB(process.resourceUsage().maxRSS * 1024),
    'perf/heap_used_gb': toGiB(heapUsed),
  };
}

function toGiB(bytes: number): number {
  return Math.round((bytes / GIB) * 1e4) / 1e4;
}
