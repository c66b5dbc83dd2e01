import type { CodeSandbox, SandboxLimits, SandboxStatus, TestResult } from './sandbox/CodeSandbox.js';
import { extractCode, type CodeSource } from './environment/extractCode.js';
import type { CodeTask } from './tasks/CodeTask.js';

/** The verdict on one answer: per-test results, counts, and a short text a reviewing agent can read. */
export interface CodeVerdict {
  passed: number;
  total: number;
  allPassed: boolean;
  status: SandboxStatus | 'no_code';
  tests: TestResult[];
  /** The error that ended or prevented the run. */
  error?: string;
  /** `3/4 tests passed; f(2): expected 5, got 4`: the feedback a reflective workflow shows the coder. */
  feedback: string;
  /** Where the code came from in the answer; undefined when it had none. */
  source?: CodeSource;
  durationMs: number;
}

const FEEDBACK_FAILURES = 2;

function definesEntryPoint(code: string, entryPoint: string): boolean {
  const name = entryPoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?:def|function)\\s+${name}\\s*\\(|(?:const|let|var)\\s+${name}\\s*=|^${name}\\s*=`, 'm').test(code);
}

/**
 * Runs an answer against a task's tests in the sandbox of its language. `answer` is a model's response (the code is
 * extracted: see `extractCode`) or plain code. When the task has starter code and the code does not define the
 * entry point itself (a HumanEval completion of the body), the starter code is prepended.
 */
export async function verifyCode(
  task: CodeTask,
  answer: string,
  sandbox: CodeSandbox,
  limits?: Partial<SandboxLimits>,
): Promise<CodeVerdict> {
  const total = task.tests.length;
  const extracted = extractCode(answer);
  if (!extracted) {
    const error = 'no code in the answer';
    const tests = task.tests.map((t) => ({ name: t.name, passed: false, error }));
    return {
      passed: 0,
      total,
      allPassed: false,
      status: 'no_code',
      tests,
      error,
      feedback: `0/${total} tests passed; ${error}`,
      durationMs: 0,
    };
  }
  let code = extracted.code;
  if (task.starterCode && task.entryPoint && !definesEntryPoint(code, task.entryPoint)) code = `${task.starterCode}${code}`;
  const run = await sandbox.run({ language: task.language, code, tests: task.tests, limits });
  const passed = run.tests.filter((t) => t.passed).length;
  const failures = run.tests.filter((t) => !t.passed);
  const details =
    run.status !== 'ok' && run.error ? [run.error] : failures.slice(0, FEEDBACK_FAILURES).map((t) => `${t.name}: ${t.error ?? 'failed'}`);
  return {
    passed,
    total,
    allPassed: total > 0 && passed === total,
    status: run.status,
    tests: run.tests,
    ...(run.error ? { error: run.error } : {}),
    feedback: [`${passed}/${total} tests passed`, ...details].join('; '),
    source: extracted.source,
    durationMs: run.durationMs,
  };
}
