import { GraphBuilder, loadOnnxRuntime } from '@drmas/plugin-backend-onnx';

/**
 * onnxruntime's matmul ceiling on this machine: GFLOP/s of a 2048 x 2048 x 2048 float32 MatMul, median of `repeats`
 * after a warm-up run, with `sessionOptions` (default onnxruntime's own threads, as the engine's sessions use).
 */
export async function matmulCeiling(repeats = 5, sessionOptions = {}) {
  const ort = await loadOnnxRuntime();
  const n = 2048;
  const g = new GraphBuilder('matmul');
  g.output(g.op('MatMul', [g.input('a', 'float', [n, n]), g.input('b', 'float', [n, n])]), 'c', 'float', [n, n]);
  const session = await ort.InferenceSession.create(g.toModelProto(), { graphOptimizationLevel: 'all', ...sessionOptions });
  const feeds = {
    a: new ort.Tensor('float32', new Float32Array(n * n).fill(0.5), [n, n]),
    b: new ort.Tensor('float32', new Float32Array(n * n).fill(0.25), [n, n]),
  };
  await session.run(feeds);
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    await session.run(feeds);
    times.push((performance.now() - t) / 1000);
  }
  await session.release();
  times.sort((a, b) => a - b);
  return (2 * n ** 3) / times[Math.floor(times.length / 2)] / 1e9;
}
