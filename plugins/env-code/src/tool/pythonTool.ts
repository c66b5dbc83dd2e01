import { defineTool, z, type Tool } from '@drmas/core';
import type { CodeSandbox } from '../sandbox/CodeSandbox.js';

export interface PythonToolOptions {
  /** The sandboxes: Python runs in their Pyodide worker. */
  sandbox: () => CodeSandbox;
  /** Time budget of one call (the episode's earlier cells and the new one) and its memory. */
  limits: () => { timeoutMs: number; memoryBytes: number };
}

/** Loading Pyodide takes seconds on the first call; the tool's own limit leaves room for it. */
const PYTHON_TOOL_TIMEOUT_MS = 60_000;

/**
 * A cell as the REPL runs it: its statements, then its last expression's repr when that is not None (as Python's
 * interactive prompt echoes it). The cell's text reaches Python as a JSON string, which is a valid Python literal.
 */
function cellProgram(cell: string): string {
  return [
    'import ast as _drmas_ast',
    `_drmas_tree = _drmas_ast.parse(${JSON.stringify(cell)}, '<cell>')`,
    '_drmas_last = _drmas_tree.body.pop() if _drmas_tree.body and isinstance(_drmas_tree.body[-1], _drmas_ast.Expr) else None',
    "exec(compile(_drmas_tree, '<cell>', 'exec'), globals())",
    'if _drmas_last is not None:',
    "    _drmas_value = eval(compile(_drmas_ast.Expression(_drmas_last.value), '<cell>', 'eval'), globals())",
    '    if _drmas_value is not None: print(repr(_drmas_value))',
  ].join('\n');
}

/**
 * A Python REPL whose state lasts the episode. The Pyodide sandbox restores the interpreter after every run (so runs
 * cannot reach each other); the REPL keeps its state by running the episode's earlier successful cells again, quietly,
 * before each new cell. A cell that fails is left out of the history, as if it had not been typed. Code whose result
 * changes between runs (random numbers, the clock) is run anew each time: only its effects on names carry over.
 */
export function pythonTool(options: PythonToolOptions): Tool<{ code: string }> {
  return defineTool({
    name: 'python',
    description: 'run Python; state lasts the episode',
    input: z.strictObject({ code: z.string().min(1).max(4000).describe('Python statements; the last expression is echoed') }),
    timeoutMs: PYTHON_TOOL_TIMEOUT_MS,
    run: async ({ code }, { episodeState, signal }) => {
      const history = episodeState('cells', (): string[] => []);
      const limits = options.limits();
      const run = await options.sandbox().run({
        language: 'python',
        code: history.join('\n'),
        tests: [{ name: 'cell', kind: 'exec', code: cellProgram(code) }],
        limits,
      });
      signal.throwIfAborted();
      if (run.status === 'timeout') throw new Error(`the code ran longer than ${limits.timeoutMs} ms`);
      if (run.status === 'memory') throw new Error('the code ran out of memory');
      if (run.status === 'error') throw new Error(run.error ?? "the episode's earlier cells failed when run again");
      const cell = run.tests[0]!;
      const printed = cell.stdout ?? '';
      if (!cell.passed) return `${printed}${cell.error ?? 'error'}`;
      history.push(code);
      return printed === '' ? '(no output)' : printed.replace(/\n$/, '');
    },
  });
}
