import { scoreMathResponse } from '../src/index.js';

describe('scoreMathResponse', () => {
  test('correct, wrong, no_boxed, truncated', () => {
    expect(scoreMathResponse('12-5=7. 7+8=15. \\boxed{15}', '15')).toEqual({ correct: true, extracted: '15', reason: 'correct' });
    expect(scoreMathResponse('\\boxed{0.75}', '3/4')).toEqual({ correct: true, extracted: '0.75', reason: 'correct' });
    expect(scoreMathResponse('\\boxed{14}', '15')).toEqual({ correct: false, extracted: '14', reason: 'wrong' });
    expect(scoreMathResponse('it is 15', '15')).toEqual({ correct: false, reason: 'no_boxed' });
    expect(scoreMathResponse('so \\boxed{1', '15')).toEqual({ correct: false, reason: 'truncated' });
    expect(scoreMathResponse('<think>let me see, 12-5', '15')).toEqual({ correct: false, reason: 'truncated' });
    expect(scoreMathResponse('<think>\\boxed{15}</think>', '15')).toEqual({ correct: false, reason: 'no_boxed' });
    expect(scoreMathResponse(undefined as unknown as string, '15')).toEqual({ correct: false, reason: 'no_boxed' });
  });
});
