import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MALLOC_MMAP_THRESHOLD, processExecve, relaunchWithMallocThreshold, wantsMallocThreshold } from '../src/cli/mallocRelaunch.js';
import { REPO_ROOT, TempProject } from '../../test/support/tempProject.js';

const project = new TempProject('malloc-relaunch');
afterAll(() => project.dispose());

const glibc = wantsMallocThreshold({});
// The relaunch replaces the process (`process.execve`, Node 22.15 and later): .ci/run runs this file on the current
// Node LTS too, where these run; on older Node the command keeps glibc's threshold.
const withExecve = glibc && processExecve() !== undefined ? test : test.skip;
const withoutExecve = processExecve() === undefined ? test : test.skip;
const relaunch = path.join(REPO_ROOT, 'core', 'dist', 'cli', 'mallocRelaunch.js');

/**
 * A script that, started plainly, relaunches itself through `relaunchWithMallocThreshold`; started again (the
 * variable set), it records its environment, pid and arguments, then runs `then`.
 */
function script(then: string): string {
  const name = `relaunch-${Math.random().toString(36).slice(2)}.mjs`;
  const file = project.path(name);
  project.write({
    [name]: [
      `import { writeFileSync } from 'node:fs';`,
      `const m = await import(${JSON.stringify(relaunch)});`,
      `const out = ${JSON.stringify(`${file}.json`)};`,
      `if (process.env.MALLOC_MMAP_THRESHOLD_ === undefined) m.relaunchWithMallocThreshold(process.argv[1], process.argv.slice(2));`,
      `writeFileSync(out, JSON.stringify({ threshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, pid: process.pid, argv: process.argv.slice(2) }));`,
      then,
    ].join('\n'),
  });
  return file;
}

const record = (file: string) =>
  JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { threshold: string | null; pid: number; argv: string[] };

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the CLI's glibc mmap threshold", () => {
  test('is wanted on glibc unless the variable, a tunable or DRMAS_MALLOC=glibc says otherwise', () => {
    expect(MALLOC_MMAP_THRESHOLD).toBe(4_194_304);
    expect(wantsMallocThreshold({ MALLOC_MMAP_THRESHOLD_: '131072' })).toBe(false);
    expect(wantsMallocThreshold({ DRMAS_MALLOC: 'glibc' })).toBe(false);
    expect(wantsMallocThreshold({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' })).toBe(false);
    // The report header names glibc where the process runs on it (this machine's Debian) and nowhere else.
    const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
    expect(wantsMallocThreshold({})).toBe(process.platform === 'linux' && report.header?.glibcVersionRuntime !== undefined);
  });

  withExecve(
    'the process replaces itself: the same pid and arguments under the threshold, its exit code the command’s',
    () => {
      const file = script('process.exitCode = 7;');
      const child = spawnSync(process.execPath, [file, 'train', '--set', 'a=b'], { encoding: 'utf8', timeout: 60_000 });
      expect(child.status).toBe(7);
      expect(record(file)).toEqual({ threshold: '4194304', pid: child.pid, argv: ['train', '--set', 'a=b'] });
    },
    60_000,
  );

  withExecve(
    'a signal to the command reaches what it runs: it is the same process',
    async () => {
      const file = script(`process.once('SIGINT', () => process.exit(3)); setInterval(() => {}, 1000);`);
      const child = spawn(process.execPath, [file], { stdio: 'ignore' });
      await until(() => existsSync(`${file}.json`));
      expect(record(file).pid).toBe(child.pid);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGINT');
      expect(await exited).toBe(3);
    },
    60_000,
  );

  withoutExecve(
    'on a Node without process.execve nothing is started: the command runs as it was',
    () => {
      const before = { ...process.env };
      expect(relaunchWithMallocThreshold(path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), ['--version'])).toBeUndefined();
      expect(process.env).toEqual(before);
      const file = script('');
      expect(spawnSync(process.execPath, [file], { timeout: 60_000 }).status).toBe(0);
      expect(record(file).threshold).toBeNull();
    },
    60_000,
  );
});
