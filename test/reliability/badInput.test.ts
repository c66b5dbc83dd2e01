import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { runBin, runCli, type CliResult } from '../support/cliRunner.js';
import { TempProject } from '../support/tempProject.js';
import { BAD_INPUT_CASES, type BadInputCase } from './support/badInputCases.js';
import { recordFigures } from './support/figures.js';

/** A case should fail within this; slower ones are counted, not failed. */
const PROMPT_MS = 2_000;
/** A spawned case that runs past this has hung (the /proc mkdir loop did). */
const HANG_MS = 30_000;

const project = new TempProject('bad-input');

interface Outcome {
  ok: boolean;
  internal: boolean;
  stackTrace: boolean;
  silent: boolean;
  ms: number;
}
const outcomes: Outcome[] = [];

/** `error CODE (where): message`, the first line of a user error. */
const ERROR_LINE = /^error ([A-Z_]+)(?: \((.*?)\))?: (.*)$/m;

function caseDir(index: number, badCase: BadInputCase): string {
  const dir = project.path(`case-${String(index).padStart(3, '0')}`);
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string | object> = {};
  for (const [name, content] of Object.entries(badCase.files ?? {})) files[path.join(path.basename(dir), name)] = content;
  project.write(files);
  for (const [link, target] of Object.entries(badCase.links ?? {})) symlinkSync(target, path.join(dir, link));
  return dir;
}

/** What the message must name before the key: a file of the case resolved in its folder, or `--set ...` as is. */
function expectedWhere(badCase: BadInputCase, dir: string): string | undefined {
  if (badCase.where === undefined) return undefined;
  return badCase.where.startsWith('--') ? badCase.where : path.join(dir, badCase.where);
}

/** The text of each file the case wrote, to check that bad input lost none of them. */
function snapshot(badCase: BadInputCase, dir: string): Record<string, string> {
  return Object.fromEntries(Object.keys(badCase.files ?? {}).map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
}

function filesAfter(before: Record<string, string>, dir: string): Record<string, string> {
  return Object.fromEntries(
    Object.keys(before).map((name) => {
      try {
        return [name, readFileSync(path.join(dir, name), 'utf8')];
      } catch {
        return [name, '(gone)'];
      }
    }),
  );
}

/** Every requirement at once, so a failing case shows all that is wrong with it and its whole output. */
function check(badCase: BadInputCase, dir: string, result: CliResult, before: Record<string, string>): void {
  const [, code, where = '', message = ''] = ERROR_LINE.exec(result.stderr) ?? [];
  const file = expectedWhere(badCase, dir);
  const actual = {
    exit: result.code,
    code,
    namesFile: file === undefined || where === file || where.startsWith(`${file}: `),
    namesKey: badCase.key === undefined || where === badCase.key || where.endsWith(`: ${badCase.key}`),
    says: badCase.says === undefined || badCase.says.test(result.stderr),
    message: message.length > 0,
    hint: /^ {2}hint: \S/m.test(result.stderr),
    stackTrace: /^\s+at /m.test(`${result.stderr}\n${result.stdout}`),
    files: filesAfter(before, dir),
  };
  const required = {
    exit: 1,
    code: badCase.code,
    namesFile: true,
    namesKey: true,
    says: true,
    message: true,
    hint: true,
    stackTrace: false,
    files: before,
  };
  expect({ ...actual, stderr: result.stderr }).toEqual({ ...required, stderr: result.stderr });
}

describe('bad configs and CLI misuses: exit 1, the file and key named, a hint, no stack trace, no file lost', () => {
  afterAll(() => {
    recordFigures('bad-input', [
      {
        area: 'config',
        what: 'bad configs and CLI misuses',
        cases: BAD_INPUT_CASES.length,
        passed: outcomes.filter((o) => o.ok).length,
        counts: {
          internal: outcomes.filter((o) => o.internal).length,
          stackTraces: outcomes.filter((o) => o.stackTrace).length,
          silent: outcomes.filter((o) => o.silent).length,
          'over 2 s': outcomes.filter((o) => o.ms > PROMPT_MS).length,
          'slowest ms': Math.round(Math.max(0, ...outcomes.map((o) => o.ms))),
        },
      },
    ]);
    project.dispose();
  });

  test.each(BAD_INPUT_CASES.map((badCase, index) => [badCase.name, badCase, index] as const))('%s', async (_name, badCase, index) => {
    const dir = caseDir(index, badCase);
    const before = snapshot(badCase, dir);
    const started = performance.now();
    const result = badCase.spawn ? runBin(badCase.args, dir, HANG_MS) : await runCli(badCase.args, dir);
    const ms = performance.now() - started;
    const outcome: Outcome = {
      ok: false,
      internal: result.code === 70 || /^error INTERNAL/m.test(result.stderr),
      stackTrace: /^\s+at /m.test(`${result.stderr}\n${result.stdout}`),
      silent: result.code === 0,
      ms,
    };
    outcomes.push(outcome);
    check(badCase, dir, result, before);
    outcome.ok = true;
  });
});
