import { DecoderModel, selectRuntime, TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { OnnxPolicyBackend } from '../src/OnnxPolicyBackend.js';
import { scoreSequences, type PolicyBackend } from '@drmas/core';
import {
  ARCHITECTURE_CASES,
  makeBatch,
  maxAbsDiff,
  randomWeights,
  tinyConfigJson,
  updateRequest,
  weightedLogLikelihood,
} from './parityFixtures.js';

const PROMPTS = [[3, 7, 1, 9, 4, 22], [8], [30, 4, 11, 2]];
const RESPONSES = [[12, 5, 20, 2], [30, 4, 11, 7, 7, 1, 40], [6]];

const CASES = ARCHITECTURE_CASES.flatMap((c) => (['fused', 'shared'] as const).map((weightLayout) => ({ ...c, weightLayout })));

describe.each(CASES)('onnx vs tfjs: $label, $weightLayout weights', ({ architecture, extra, weightLayout }) => {
  let tfjs: TfjsPolicyBackend;
  let onnx: OnnxPolicyBackend;
  beforeAll(async () => {
    await selectRuntime('cpu');
    const { config, weights } = randomWeights(tinyConfigJson(architecture, extra), 3);
    tfjs = new TfjsPolicyBackend('tfjs', 'test', DecoderModel.fromTensors(config, weights), undefined);
    onnx = await OnnxPolicyBackend.create(config, weights, undefined, { provider: 'cpu', weightLayout });
  });
  afterAll(() => {
    tfjs.dispose();
    onnx.dispose();
  });

  const scoreDiff = async () => {
    const score = (backend: PolicyBackend) => scoreSequences(backend, PROMPTS, RESPONSES, { withEntropy: true });
    const [a, b] = await Promise.all([score(tfjs), score(onnx)]);
    return { logProbs: maxAbsDiff(a.logProbs, b.logProbs), entropy: maxAbsDiff(a.entropy!, b.entropy!), a, b };
  };

  it('scores the same log-probs and entropies (mixed prompt and response lengths)', async () => {
    const diff = await scoreDiff();
    expect(diff.logProbs).toBeLessThan(1e-4);
    expect(diff.entropy).toBeLessThan(1e-4);
  });

  it('scores the same log-probs at per-row temperatures, and samples with log-probs at the sampling temperature', async () => {
    const temperatures = [0.6, 1, 1.7];
    const score = (backend: PolicyBackend) => scoreSequences(backend, PROMPTS, RESPONSES, { temperatures });
    const [a, b, plain] = await Promise.all([score(tfjs), score(onnx), scoreSequences(onnx, PROMPTS, RESPONSES)]);
    expect(maxAbsDiff(a.logProbs, b.logProbs)).toBeLessThan(1e-4);
    expect(maxAbsDiff(plain.logProbs, b.logProbs)).toBeGreaterThan(1e-3);
    const sampled = await onnx.generate({ prompts: PROMPTS, maxNewTokens: 6, temperature: 0.6, seed: 2, stopTokenIds: [] });
    const rescored = await scoreSequences(tfjs, PROMPTS, sampled.tokenIds, { temperatures: [0.6, 0.6, 0.6] });
    expect(maxAbsDiff(sampled.logProbs, rescored.logProbs)).toBeLessThan(1e-4);
  });

  it('generates the same greedy tokens with the same log-probs', async () => {
    const request = { prompts: PROMPTS, maxNewTokens: 12, temperature: 0, stopTokenIds: [] };
    const [a, b] = await Promise.all([tfjs.generate(request), onnx.generate(request)]);
    expect(b.tokenIds).toEqual(a.tokenIds);
    expect(maxAbsDiff(a.logProbs, b.logProbs)).toBeLessThan(1e-4);
  });

  it('generates the same greedy tokens past several growths of the cache view, rows finishing at different steps', async () => {
    // 80 new tokens: the decode steps' view of the caches grows twice (32 slots at a time) and rows leave the batch
    // between growths once a stop id (row 0's 41st greedy token) comes up.
    const long = { prompts: PROMPTS, maxNewTokens: 80, temperature: 0, stopTokenIds: [] };
    const free = await tfjs.generate(long);
    const request = { ...long, stopTokenIds: [free.tokenIds[0]![40]!] };
    const [a, b] = await Promise.all([tfjs.generate(request), onnx.generate(request)]);
    expect(a.tokenIds[0]!.length).toBeLessThanOrEqual(41);
    expect(b.tokenIds).toEqual(a.tokenIds);
    expect(b.finishReasons).toEqual(a.finishReasons);
    expect(maxAbsDiff(a.logProbs, b.logProbs)).toBeLessThan(1e-4);
  });

  it('agrees again after a tfjs update and syncWeights', async () => {
    const before = (await scoreSequences(onnx, PROMPTS, RESPONSES)).logProbs;
    const pairs = PROMPTS.map((p, i): [number[], number[]] => [p, RESPONSES[i]!]);
    await tfjs.update(
      updateRequest(
        makeBatch(
          pairs,
          pairs.map((_, r) => (r % 2 === 0 ? 1 : -0.5)),
        ),
        weightedLogLikelihood,
        3,
        { optimizer: { lr: 3e-3 } },
      ),
    );
    await onnx.syncWeights(tfjs);
    const diff = await scoreDiff();
    expect(maxAbsDiff(before, diff.b.logProbs)).toBeGreaterThan(1e-3);
    expect(diff.logProbs).toBeLessThan(1e-4);
    const request = { prompts: PROMPTS, maxNewTokens: 8, temperature: 0, stopTokenIds: [] };
    const [a, b] = await Promise.all([tfjs.generate(request), onnx.generate(request)]);
    expect(b.tokenIds).toEqual(a.tokenIds);
  });
});
