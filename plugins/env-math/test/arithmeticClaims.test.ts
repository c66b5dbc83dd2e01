import { ArithmeticTaskSource, checkArithmeticClaims, solverDemonstration, verifierDemonstration } from '../src/index.js';

describe('checkArithmeticClaims', () => {
  test.each([
    // claims read, false ones, by hand
    ['8*10=80. 0+7=7, 8+4=12; 80+47=127. \\boxed{127}', 4, 0],
    ['8*10=80. 0+7=7, 8+4=11; 80+47=17. \\boxed{117}', 4, 2],
    ['10*7=72. 7+3=9, 7+7=15; 77+73. \\boxed{73}', 3, 3],
    ['12-7=5, 5-1-2=2; 52-27=25.', 3, 0],
    ['18-19=-1. 3 * 4 + 5 = 17', 2, 0],
    ['10 + 7 * 3 = 51', 1, 1],
    ['99999999999*99999999999=9999999999800000000001', 1, 0],
    ['\\boxed{42}', 0, 0],
  ])('%s: %p claims, %p false', (text, claims, wrong) => {
    expect(checkArithmeticClaims(text)).toEqual({ claims, false: wrong });
  });

  test.each([
    ['fractions', '1/2+6/7=7/14+12/14=19/14.'],
    ['decimals', '0.5+1=1.5 and 2+0.25=2.25'],
    ['a signed or bracketed operand', '-2-10=-12. 2*(-1)=-2. (1+2)*3=9'],
    ['algebra and powers', 'x+1=3, 2^3+1=9, 3+x=4'],
  ])('%s are not read as claims', (_, text) => {
    expect(checkArithmeticClaims(text).claims).toBe(0);
  });

  test('every teacher demonstration, all five levels and both styles, has only true claims; one changed digit makes one false', () => {
    const source = new ArithmeticTaskSource({ seed: 3, levels: [1, 2, 3, 4, 5], trainSize: 400, testSize: 0 });
    let read = 0;
    for (let i = 0; i < 400; i++) {
      const task = source.train(i);
      for (const method of ['columns', 'steps'] as const) {
        const solution = solverDemonstration(task, { method });
        const found = checkArithmeticClaims(solution);
        expect({ solution, false: found.false }).toEqual({ solution, false: 0 });
        expect(checkArithmeticClaims(verifierDemonstration(task, task.answer, { method })).false).toBe(0);
        read += found.claims;
        const last = /(\d+(?:[-+*]\d+)+)=(\d+)\./.exec(solution);
        if (last && !/[\d./]/.test(solution[last.index - 1] ?? '')) {
          const changed = String(Number(last[2]) + 1);
          const corrupted = solution.slice(0, last.index) + `${last[1]}=${changed}.` + solution.slice(last.index + last[0].length);
          expect(checkArithmeticClaims(corrupted)).toEqual({ claims: found.claims, false: 1 });
        }
      }
    }
    expect(read).toBeGreaterThan(1000);
  });
});
