import { ADVANTAGE_ESTIMATORS, computeAdvantage, computeAdvantageColumnar, type BuiltinEstimatorName } from '../src/index.js';
import { expectClose } from './closeTo.js';

function batch(rows: number, cols: number) {
  const tokenRewards = new Float64Array(rows * cols);
  const responseMask = new Float64Array(rows * cols);
  const groupCodes = new Int32Array(rows);
  const agentCodes = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    const len = 1 + ((r * 7) % cols);
    for (let t = 0; t < len; t++) responseMask[r * cols + t] = 1;
    tokenRewards[r * cols + len - 1] = (r * 13) % 5 === 0 ? 1 : (r % 3) * 0.5;
    groupCodes[r] = Math.floor(r / 8);
    agentCodes[r] = r % 2;
  }
  return { tokenRewards, responseMask, groupCodes, agentCodes, rowLength: cols };
}

const rowsOf = (flat: ArrayLike<number>, rows: number, cols: number) =>
  Array.from({ length: rows }, (_, r) => Array.from({ length: cols }, (_, t) => flat[r * cols + t]!));

describe('columnar fast path', () => {
  const rows = 40;
  const cols = 6;
  const b = batch(rows, cols);
  const nested = {
    tokenRewards: rowsOf(b.tokenRewards, rows, cols),
    responseMask: rowsOf(b.responseMask, rows, cols),
    groupIds: Array.from(b.groupCodes, (g) => `prompt-${g}`),
    agentIds: Array.from(b.agentCodes, (a) => `agent-${a}`),
  };

  it.each<BuiltinEstimatorName>(['drmas', 'grpo', 'rloo', 'reinforce_plus_plus_baseline'])('%s matches the number[][] path', (name) => {
    const flat = computeAdvantageColumnar(ADVANTAGE_ESTIMATORS[name], b);
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS[name], nested);
    for (let r = 0; r < rows; r++) {
      for (let t = 0; t < cols; t++) {
        expectClose(flat.advantages[r * cols + t]!, out.advantages[r]![t]!, 0, `${r},${t}`);
        expectClose(flat.returns[r * cols + t]!, out.returns[r]![t]!, 0, `${r},${t}`);
      }
    }
    expect(flat.returns).not.toBe(flat.advantages);
  });

  it('accepts Float32Array buffers and sparse integer codes', () => {
    const f32 = {
      ...b,
      tokenRewards: Float32Array.from(b.tokenRewards),
      responseMask: Float32Array.from(b.responseMask),
      groupCodes: Int32Array.from(b.groupCodes, (g) => g * 1_000_000),
    };
    const a = computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.drmas, f32).advantages;
    const e = computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.drmas, b).advantages;
    for (let i = 0; i < a.length; i++) expectClose(a[i]!, e[i]!, 1e-6, `${i}`);
  });

  it('precomputed group key codes override the named key', () => {
    const byAgent = computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.grpo, b, {
      groupKeyCodes: Int32Array.from(b.groupCodes, (g, r) => g * 2 + b.agentCodes[r]!),
    });
    const drmas = computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.drmas, b);
    expect(Array.from(byAgent.advantages)).toEqual(Array.from(drmas.advantages));
  });

  it('validates buffer sizes and codes', () => {
    expect(() => computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.grpo, { ...b, responseMask: new Float64Array(3) })).toThrow(/responseMask/);
    expect(() =>
      computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.grpo, { ...b, groupCodes: Int32Array.from(b.groupCodes, (g) => g - 1) }),
    ).toThrow(/groupCodes/);
    expect(() => computeAdvantageColumnar(ADVANTAGE_ESTIMATORS.drmas, { ...b, agentCodes: undefined })).toThrow(/agentCodes/);
  });
});
