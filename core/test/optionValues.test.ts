import { DrmasError } from '../src/errors/DrmasError.js';
import { integerOption, numberOption } from '../src/cli/optionValues.js';

function failure(run: () => unknown): { message: string; key?: string; hint?: string } {
  try {
    run();
  } catch (error) {
    expect(DrmasError.is(error)).toBe(true);
    const e = error as DrmasError;
    return { message: e.message, key: e.key, hint: e.hint };
  }
  throw new Error('expected an INVALID_ARGUMENT error');
}

describe('integerOption', () => {
  const spec = { min: 1, max: 100, example: 16 };

  test('absent is undefined; decimal digits within the bounds are the number', () => {
    expect(integerOption({}, 'k', spec)).toBeUndefined();
    expect(integerOption({ k: '1' }, 'k', spec)).toBe(1);
    expect(integerOption({ k: ' 100 ' }, 'k', spec)).toBe(100);
    expect(integerOption({ k: '+7' }, 'k', spec)).toBe(7);
    expect(integerOption({ s: '-3' }, 's', { min: -5 })).toBe(-3);
  });

  test.each(['0x10', '1e2', '1.5', '', ' ', 'ten', '0b1', '101', '0', 'Infinity', '9007199254740993'])('refuses %j', (raw) => {
    const error = failure(() => integerOption({ k: raw }, 'k', spec));
    expect(error).toEqual({ message: `expects a whole number from 1 to 100, got ${JSON.stringify(raw)}`, key: '--k', hint: 'e.g. --k 16' });
  });

  test('a boolean flag given where a value is expected is refused, not read as a number', () => {
    expect(failure(() => integerOption({ k: true }, 'k', spec)).message).toBe('expects a whole number from 1 to 100, got true');
  });

  test('a note follows the example in the hint', () => {
    expect(failure(() => integerOption({ c: '0' }, 'c', { min: 1, max: 64, example: 1, note: 'start more workers instead' })).hint).toBe(
      'e.g. --c 1 (start more workers instead)',
    );
  });

  test('the message says what the value counts and an open upper bound', () => {
    expect(failure(() => integerOption({ k: '0' }, 'k', { min: 1, of: 'samples per task' })).message).toBe(
      'expects a whole number of samples per task of 1 or more, got "0"',
    );
  });
});

describe('numberOption', () => {
  test('decimal and exponent spellings; the bounds, an exclusive minimum included', () => {
    expect(numberOption({ lr: '3e-4' }, 'lr', { min: 0, exclusiveMin: true })).toBe(0.0003);
    expect(numberOption({ t: '.5' }, 't', { min: 0 })).toBe(0.5);
    expect(numberOption({ t: '0' }, 't', { min: 0 })).toBe(0);
    expect(numberOption({ p: '1' }, 'p', { min: 0, exclusiveMin: true, max: 1 })).toBe(1);
  });

  test.each([
    ['0', 'expects a number above 0, got "0"'],
    ['-1e-3', 'expects a number above 0, got "-1e-3"'],
    ['0x1', 'expects a number above 0, got "0x1"'],
    ['1e999', 'expects a number above 0, got "1e999"'],
    ['NaN', 'expects a number above 0, got "NaN"'],
  ])('refuses %j', (raw, message) => {
    expect(failure(() => numberOption({ lr: raw }, 'lr', { min: 0, exclusiveMin: true, example: '1e-3' }))).toEqual({
      message,
      key: '--lr',
      hint: 'e.g. --lr 1e-3',
    });
  });

  test('a closed range is said with both ends', () => {
    expect(failure(() => numberOption({ p: '1.5' }, 'p', { min: 0, exclusiveMin: true, max: 1 })).message).toBe(
      'expects a number above 0 and at most 1, got "1.5"',
    );
  });
});
