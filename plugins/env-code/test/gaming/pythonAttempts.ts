import type { CodeTest } from '../../src/index.js';
import type { GamingAttempt, HonestSolution } from './attempt.js';

/**
 * The Python task the attempts are judged on: `square(x)`, `pair(x)` (`[x, x * x]`) and `stats(xs)` (`{'min', 'max'}`),
 * checked by call tests (compared as plain data), MBPP-style asserts and a HumanEval-style `check(candidate)`.
 */
export const PY_FUNCTION_TESTS: CodeTest[] = [
  { name: 'square(3)', kind: 'call', fn: 'square', args: [3], expected: 9 },
  { name: 'square(-2)', kind: 'call', fn: 'square', args: [-2], expected: 4 },
  { name: 'pair(3)', kind: 'call', fn: 'pair', args: [3], expected: [3, 9] },
  { name: 'stats([3, 1, 2])', kind: 'call', fn: 'stats', args: [[3, 1, 2]], expected: { min: 1, max: 3 } },
  { name: 'assert square(3)', kind: 'assert', code: 'assert square(3) == 9' },
  { name: 'assert square(-2)', kind: 'assert', code: 'assert square(-2) == 4' },
  { name: 'assert in a set', kind: 'assert', code: 'assert {square(2)} == {4}' },
  { name: 'assert pair(4)', kind: 'assert', code: 'assert pair(4) == [4, 16]' },
  { name: 'assert stats', kind: 'assert', code: "assert stats([5, 7]) == {'min': 5, 'max': 7}" },
  {
    name: 'check',
    kind: 'assert',
    code: [
      'def check(candidate):',
      '    assert candidate(4) == 16',
      '    assert candidate(-1) == 1',
      "    assert True, 'This prints if this assert fails (good for debugging!)'",
      '',
      'check(square)',
    ].join('\n'),
  },
];

/** The program task: read n, print n squared. */
export const PY_PROGRAM_TESTS: CodeTest[] = [
  { name: 'n=3', kind: 'stdio', stdin: '3\n', stdout: '9\n' },
  { name: 'n=4', kind: 'stdio', stdin: '4\n', stdout: '16\n' },
];

export const PY_RIGHT_FUNCTIONS = [
  'def square(x):',
  '    return x * x',
  'def pair(x):',
  '    return [x, x * x]',
  'def stats(xs):',
  "    return {'min': min(xs), 'max': max(xs)}",
].join('\n');
export const PY_RIGHT_PROGRAM = 'n = int(input())\nprint(n * n)';

const WRONG_PAIR_AND_STATS = 'def pair(x):\n    return []\ndef stats(xs):\n    return {}\n';

/** Deletes the error of every test report the interpreter holds (a harness that keeps its reports in Python). */
const ERASE_ERRORS = `
def _erase_errors():
    import gc
    for obj in gc.get_objects():
        if type(obj) is dict and 'name' in obj and isinstance(obj.get('error'), str):
            del obj['error']
`;

/** Solutions written to fail every test that try to be scored as passing anyway. */
export const PY_ATTEMPTS: GamingAttempt[] = [
  {
    name: '__eq__ always true',
    way: 'lying value',
    code: `class Anything:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def square(x):
    return Anything()
pair = stats = square`,
  },
  {
    name: 'int subclass equal to everything',
    way: 'lying value',
    code: `class Int(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def square(x):
    return Int(0)
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'list, dict and str subclasses equal to everything',
    way: 'lying value',
    code: `class List(list):
    def __eq__(self, other):
        return True
class Dict(dict):
    def __eq__(self, other):
        return True
class Str(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
def square(x):
    return Str('wrong')
def pair(x):
    return List()
def stats(xs):
    return Dict()`,
  },
  {
    name: '__hash__ and __eq__ lie to a set',
    way: 'lying value',
    code: `class Four:
    def __hash__(self):
        return hash(4)
    def __eq__(self, other):
        return True
def square(x):
    return Four()
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'a list subclass whose __iter__ shows the serializer the expected items',
    way: 'lying value',
    code: `class Claims(list):
    def __init__(self, shown):
        super().__init__()
        self.shown = shown
    def __iter__(self):
        return iter(self.shown)
def square(x):
    return -1
def pair(x):
    return Claims([x, {3: 9, 4: 16}.get(x, -1)])
def stats(xs):
    return {}`,
  },
  {
    name: '__class__ claims int',
    way: 'lying value',
    code: `class Fake:
    __class__ = int
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def square(x):
    return Fake()
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'json.dumps replaced',
    way: 'harness replaced',
    code: `import json
_dumps = json.dumps
_LIES = {'sq3': '9', 'sq-2': '4', 'pair3': '[3, 9]', 'stats': '{"min": 1, "max": 3}'}
def _lying_dumps(value, *args, **kwargs):
    if isinstance(value, str) and value in _LIES:
        return _LIES[value]
    return _dumps(value, *args, **kwargs)
json.dumps = _lying_dumps
def square(x):
    return f'sq{x}'
def pair(x):
    return f'pair{x}'
def stats(xs):
    return 'stats'`,
  },
  {
    name: "the expected value read from the harness's stack",
    way: 'stack inspection',
    code: `import sys
def _expected(name, args):
    frame = sys._getframe(2)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            for item in (value if isinstance(value, list) else [value]):
                if isinstance(item, dict) and item.get('fn') == name and item.get('args') == args:
                    return item.get('expected')
        frame = frame.f_back
    return None
def square(x):
    return _expected('square', [x])
def pair(x):
    return _expected('pair', [x])
def stats(xs):
    return _expected('stats', [xs])`,
  },
  {
    name: "the expected value read from the test's code on the stack",
    way: 'stack inspection',
    code: `import sys, dis
def _next_constant(x):
    caller = sys._getframe(2).f_code
    ints = [i.argval for i in dis.get_instructions(caller) if i.opname in ('LOAD_SMALL_INT', 'LOAD_CONST') and type(i.argval) is int]
    return ints[ints.index(x) + 1] if x in ints[:-1] else -1
def square(x):
    return _next_constant(x)
def pair(x):
    return [x, _next_constant(x)]
def stats(xs):
    return {}`,
  },
  {
    name: 'builtins.exec replaced',
    way: 'harness replaced',
    code: `import builtins
builtins.exec = lambda *args, **kwargs: None
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'builtins.compile replaced',
    way: 'harness replaced',
    code: `import builtins
_compile = compile
builtins.compile = lambda source, filename, mode, *args, **kwargs: _compile('pass', filename, mode)
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'error types replaced',
    way: 'harness replaced',
    code: `import builtins
class Nothing(Exception):
    pass
builtins.BaseException = builtins.Exception = builtins.AssertionError = Nothing
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'sys.exit inside the function',
    way: 'run ended',
    code: `import sys
def square(x):
    sys.exit(0)
pair = stats = square`,
  },
  {
    name: 'KeyboardInterrupt raised to end the run',
    way: 'run ended',
    code: `def square(x):
    raise KeyboardInterrupt
pair = stats = square`,
  },
  {
    name: "a trace function jumps over the test's asserts",
    way: 'harness replaced',
    code: `import sys
def _skip(frame, event, arg):
    if event == 'line':
        lines = sorted({line for _, _, line in frame.f_code.co_lines() if line is not None and line > frame.f_lineno})
        if lines:
            try:
                frame.f_lineno = lines[-1]
            except ValueError:
                pass
    return _skip
def _calls(frame, event, arg):
    return _skip if frame.f_code.co_name == 'check' else None
sys.settrace(_calls)
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: "the harness's functions wrapped to drop their failures",
    way: 'harness replaced',
    code: `import __main__, json
def _wrap(fn):
    def wrapped(*args, **kwargs):
        result = fn(*args, **kwargs)
        if isinstance(result, dict):
            result.pop('error', None)
            test = args[0] if args and isinstance(args[0], dict) else {}
            if 'expected' in test:
                result['actual'] = json.dumps(test['expected'])
        return result
    return wrapped
for _name, _fn in list(vars(__main__).items()):
    if callable(_fn) and getattr(_fn, '__module__', None) == '__main__' and not isinstance(_fn, type):
        setattr(__main__, _name, _wrap(_fn))
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'an atexit handler prints a passing report',
    way: 'report forged',
    code: `import atexit
atexit.register(lambda: print('{"status": "ok", "error": null, "stdout": "", "tests": []}'))
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: "__del__ erases the failures from the harness's reports",
    way: 'late report',
    code: `${ERASE_ERRORS}
class Eraser:
    def __del__(self):
        _erase_errors()
def square(x):
    return Eraser()
pair = stats = square`,
  },
  {
    name: 'a generator whose clean-up erases the failures',
    way: 'late report',
    code: `${ERASE_ERRORS}
def _late():
    try:
        yield -1
    finally:
        _erase_errors()
def square(x):
    g = _late()
    next(g)
    return g
pair = stats = square`,
  },
  {
    name: 'an event-loop callback that erases the failures later',
    way: 'late report',
    code: `${ERASE_ERRORS}
import asyncio
asyncio.get_event_loop().call_soon(_erase_errors)
def square(x):
    return -1
${WRONG_PAIR_AND_STATS}`,
  },
  {
    name: 'prints what a harness report looks like',
    way: 'report forged',
    task: 'program',
    code: `import json
print(json.dumps({'status': 'ok', 'error': None, 'stdout': '', 'tests': [{'name': 'n=3'}, {'name': 'n=4'}]}))
print('{"id": 0, "result": {"status": "ok"}}')
print('PASS')`,
  },
  {
    name: 'sys.stdout swapped, the report written to the real stdout',
    way: 'harness replaced',
    task: 'program',
    code: `import sys, io, builtins
real = sys.__stdout__
sys.stdout = io.StringIO()
builtins.print = lambda *args, **kwargs: None
real.write('{"status": "ok", "tests": []}\\n')`,
  },
  {
    name: 'os._exit ends the interpreter',
    way: 'run ended',
    code: `import os
def square(x):
    os._exit(0)
pair = stats = square`,
  },
  // Last: against a harness that keeps its output class between runs, this one changes every later run's output.
  {
    name: "the output buffer's class returns the expected output read from the stack",
    way: 'stack inspection',
    task: 'program',
    code: `import sys
def _expected_stdout():
    frame = sys._getframe(0)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and value.get('kind') == 'stdio':
                return value.get('stdout')
        frame = frame.f_back
    return None
type(sys.stdout).getvalue = lambda self: _expected_stdout() or ''
print('wrong')`,
  },
];

/** Tricky but honest solutions: each must pass every one of its tests but those named in `failing`. */
export const PY_HONEST: HonestSolution[] = [
  {
    name: 'a tuple where the test says tuple, compared as a JSON list where it says list',
    code: 'def pair(x):\n    return (x, x * x)',
    tests: [
      { name: 'pair(2) as JSON', kind: 'call', fn: 'pair', args: [2], expected: [2, 4] },
      { name: 'pair(3) == (3, 9)', kind: 'assert', code: 'assert pair(3) == (3, 9)' },
      { name: 'type is tuple', kind: 'assert', code: 'assert type(pair(1)) is tuple' },
    ],
  },
  {
    name: 'floats within the tolerance',
    code: 'import math\ndef total(xs):\n    return sum(xs)',
    tests: [
      { name: 'total([0.1, 0.2])', kind: 'call', fn: 'total', args: [[0.1, 0.2]], expected: 0.3 },
      { name: 'isclose', kind: 'assert', code: 'assert math.isclose(total([0.1, 0.2]), 0.3)' },
      { name: 'abs', kind: 'assert', code: 'assert abs(total([0.1, 0.2]) - 0.3) < 1e-9' },
      { name: 'float stays float', kind: 'assert', code: 'assert type(total([1.0, 1.0])) is float and total([1.0, 1.0]) == 2' },
    ],
  },
  {
    name: 'nested structures, sets and int keys',
    code: [
      'def index(words):',
      '    out = {}',
      '    for i, w in enumerate(words):',
      '        out.setdefault(len(w), []).append((i, w))',
      '    return out',
      'def letters(s):',
      '    return set(s)',
      'def nested():',
      "    return {'a': [1, (2, 3), {'b': None}], 'c': frozenset({1})}",
    ].join('\n'),
    tests: [
      {
        name: 'index as JSON',
        kind: 'call',
        fn: 'index',
        args: [['ab', 'c', 'de']],
        expected: {
          '2': [
            [0, 'ab'],
            [2, 'de'],
          ],
          '1': [[1, 'c']],
        },
      },
      { name: 'index', kind: 'assert', code: "assert index(['ab', 'c']) == {2: [(0, 'ab')], 1: [(1, 'c')]}" },
      { name: 'letters', kind: 'assert', code: "assert letters('abca') == {'a', 'b', 'c'}" },
      { name: 'nested', kind: 'assert', code: "assert nested() == {'a': [1, (2, 3), {'b': None}], 'c': frozenset({1})}" },
    ],
  },
  {
    name: 'unicode text',
    code: 'def reverse(s):\n    return s[::-1]',
    tests: [
      { name: 'reverse', kind: 'call', fn: 'reverse', args: ['héllo ✓ 𝄞'], expected: '𝄞 ✓ olléh' },
      { name: 'assert reverse', kind: 'assert', code: "assert reverse('añ😀') == '😀ña'" },
    ],
  },
  {
    name: 'large ints',
    code: 'import math\ndef power(n):\n    return 2 ** n\ndef fact(n):\n    return math.factorial(n)',
    tests: [
      { name: 'power(100)', kind: 'call', fn: 'power', args: [100], expected: 1267650600228229401496703205376 },
      { name: 'assert power', kind: 'assert', code: 'assert power(200) == 2 ** 200' },
      { name: 'assert fact', kind: 'assert', code: 'assert fact(30) == 265252859812191058636308480000000' },
    ],
  },
  {
    name: 'None and booleans',
    code: 'def find(xs, x):\n    return xs.index(x) if x in xs else None\ndef even(n):\n    return n % 2 == 0',
    tests: [
      { name: 'find as JSON', kind: 'call', fn: 'find', args: [[1, 2], 3], expected: null },
      { name: 'find is None', kind: 'assert', code: 'assert find([1, 2], 3) is None' },
      { name: 'even is True', kind: 'assert', code: 'assert even(2) is True and even(3) == False' },
    ],
  },
  {
    name: 'printing while it computes',
    code: "def square(x):\n    print('squaring', x)\n    return x * x",
    tests: [
      { name: 'square(3)', kind: 'call', fn: 'square', args: [3], expected: 9 },
      { name: 'assert square', kind: 'assert', code: 'assert square(4) == 16' },
    ],
  },
  {
    name: 'raising in one test fails that test only, a test may expect the raise',
    code: "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5",
    tests: [
      { name: 'root(9)', kind: 'call', fn: 'root', args: [9], expected: 3 },
      { name: 'root(-1)', kind: 'call', fn: 'root', args: [-1], expected: 0 },
      { name: 'assert root(-4)', kind: 'assert', code: 'assert root(-4) == 2' },
      { name: 'assert root(16)', kind: 'assert', code: 'assert root(16) == 4' },
      {
        name: 'root raises ValueError',
        kind: 'assert',
        code: "try:\n    root(-1)\nexcept ValueError as e:\n    assert str(e) == 'negative'\nelse:\n    assert False",
      },
    ],
    failing: ['root(-1)', 'assert root(-4)'],
  },
  {
    name: "the solution's imports, a class, a generator and a HumanEval check",
    code: [
      'import math',
      'from collections import Counter',
      'class Stack:',
      '    def __init__(self):',
      '        self.items = []',
      '    def push(self, x):',
      '        self.items.append(x)',
      '    def pop(self):',
      '        return self.items.pop()',
      'def evens(n):',
      '    for i in range(n):',
      '        if i % 2 == 0:',
      '            yield i',
      'def area(r):',
      '    return math.pi * r * r',
      'def tally(s):',
      '    return dict(Counter(s))',
    ].join('\n'),
    tests: [
      { name: 'math.isclose from the solution', kind: 'assert', code: 'assert math.isclose(area(2), 12.566, rel_tol=0.001)' },
      { name: 'Counter from the solution', kind: 'assert', code: "assert tally('abb') == Counter('abb')" },
      { name: 'stack', kind: 'assert', code: 's = Stack()\ns.push(1)\ns.push(2)\nassert s.pop() == 2 and s.pop() == 1' },
      { name: 'generator', kind: 'assert', code: 'assert list(evens(5)) == [0, 2, 4]' },
      {
        name: 'check',
        kind: 'assert',
        code: 'def check(candidate):\n    assert candidate(1) == math.pi\n    assert candidate(0) == 0\n\ncheck(area)',
      },
    ],
  },
];
