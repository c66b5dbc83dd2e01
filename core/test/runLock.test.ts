import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import {
  acquireRunLock,
  AdvantagePlugin,
  DrmasError,
  Kernel,
  RUN_LOCK_FILE,
  RunDirectoryLock,
  RunDirectoryPlugin,
  RunFile,
  runLockHolder,
  type LoadedPlugin,
  type Plugin,
} from '@drmas/core';
import { TempProject } from '../../test/support/tempProject.js';
import { kernelConfig } from './kernelConfig.js';

const project = new TempProject('run-lock');
afterAll(() => project.dispose());

/** A process id that no process has any more: a child's, once it has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid;
}

const lockOf = (dir: string, holder: object) => writeFileSync(path.join(dir, RUN_LOCK_FILE), JSON.stringify(holder));

/** The error `run` throws, which must be a DrmasError. */
function thrown(run: () => unknown): DrmasError {
  try {
    run();
  } catch (error) {
    expect(DrmasError.is(error)).toBe(true);
    return error as DrmasError;
  }
  throw new Error('expected an error');
}

describe('acquireRunLock', () => {
  test('creates the folder and a lock naming this process; release removes it', () => {
    const dir = project.path('fresh', 'run');
    const lock = acquireRunLock(dir, '--run-dir', 'drmas train --config cfg.json');
    expect(readdirSync(dir)).toEqual([RUN_LOCK_FILE]);
    expect(runLockHolder(dir)).toMatchObject({ pid: process.pid, host: hostname(), command: 'drmas train --config cfg.json' });
    expect(lock.replaced).toBeUndefined();
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    expect(runLockHolder(dir)).toBeUndefined();
  });

  test('a folder a live process holds is refused, naming the process, and its lock is left as it was', () => {
    const dir = project.path('held');
    const first = acquireRunLock(dir, '--run-dir', 'drmas train first');
    const before = readFileSync(path.join(dir, RUN_LOCK_FILE), 'utf8');
    const error = thrown(() => acquireRunLock(dir, '--run-dir', 'drmas train second'));
    expect(error.code).toBe('RUN_DIR_IN_USE');
    expect(error.key).toBe('--run-dir');
    expect(error.file).toBe(path.join(dir, RUN_LOCK_FILE));
    expect(error.message).toBe(
      `${dir} is being written by another drmas run (process ${process.pid}, started ${(JSON.parse(before) as { startedAt: string }).startedAt}: drmas train first)`,
    );
    expect(error.hint).toMatch(/^wait for that run to end or stop it, or give --run-dir another folder/);
    expect(readFileSync(path.join(dir, RUN_LOCK_FILE), 'utf8')).toBe(before);
    expect(readdirSync(dir)).toEqual([RUN_LOCK_FILE]);
    first.release();
  });

  test("a killed run's lock (its process gone) is replaced and reported", () => {
    const dir = project.path('stale');
    const pid = deadPid();
    acquireRunLock(dir, 'x').release();
    lockOf(dir, { pid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'drmas train', id: 'old' });
    expect(runLockHolder(dir)).toBeUndefined();
    const lock = acquireRunLock(dir, '--run-dir');
    expect(lock.replaced).toMatchObject({ pid, startedAt: '2026-01-01T00:00:00.000Z' });
    expect(runLockHolder(dir)?.pid).toBe(process.pid);
    lock.release();
  });

  test("another machine's lock is refused (its process cannot be seen from here), saying to delete it if that run is over", () => {
    const dir = project.path('elsewhere');
    acquireRunLock(dir, 'x').release();
    lockOf(dir, { pid: deadPid(), host: 'node-7', startedAt: 'then', command: 'drmas train', id: 'other' });
    expect(runLockHolder(dir)?.host).toBe('node-7');
    const error = thrown(() => acquireRunLock(dir, 'trainer.outputDir'));
    expect(error.message).toMatch(/\(process \d+ on node-7, started then: drmas train\)$/);
    expect(error.hint).toBe(
      `give trainer.outputDir another folder; if that run no longer runs on node-7, delete ${path.join(dir, RUN_LOCK_FILE)}`,
    );
  });

  test('a lock file that is not a drmas lock is refused, not overwritten', () => {
    const dir = project.path('garbage');
    acquireRunLock(dir, 'x').release();
    writeFileSync(path.join(dir, RUN_LOCK_FILE), 'not json');
    const error = thrown(() => acquireRunLock(dir, '--run-dir'));
    expect(error.message).toBe(`${dir} has a ${RUN_LOCK_FILE} that cannot be read as a drmas run lock`);
    expect(readFileSync(path.join(dir, RUN_LOCK_FILE), 'utf8')).toBe('not json');
  });

  test('a lock is handed over to the process given its id (a grid to its drmas train), and only to it', () => {
    const dir = project.path('handover');
    const grid = acquireRunLock(dir, 'x', 'experiment grid: drmas seed 0');
    expect(thrown(() => acquireRunLock(dir, '--run-dir', 'drmas train', 'some-other-id')).code).toBe('RUN_DIR_IN_USE');
    const child = acquireRunLock(dir, '--run-dir', 'drmas train', grid.id);
    expect(child.handedOverBy).toMatchObject({ id: grid.id, command: 'experiment grid: drmas seed 0' });
    expect(runLockHolder(dir)).toMatchObject({ id: child.id, command: 'drmas train' });
    // The grid lets go of a lock it no longer holds: the child's stays.
    grid.release();
    expect(runLockHolder(dir)?.id).toBe(child.id);
    // Used once: the grid's id no longer opens the folder.
    expect(thrown(() => acquireRunLock(dir, '--run-dir', 'drmas train', grid.id)).code).toBe('RUN_DIR_IN_USE');
    child.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  test("release leaves a later lock alone (only this lock's own is removed)", () => {
    const dir = project.path('later');
    const first = acquireRunLock(dir, 'x');
    first.release();
    const second = acquireRunLock(dir, 'x');
    first.release();
    expect(runLockHolder(dir)?.pid).toBe(process.pid);
    second.release();
    expect(existsSync(path.join(dir, RUN_LOCK_FILE))).toBe(false);
  });
});

describe('Kernel.run and the run lock', () => {
  const loaded = (plugin: Plugin): LoadedPlugin => ({
    plugin,
    key: 'plugins[0]',
    listedIn: 'test',
    request: plugin.name,
    resolvedFrom: 'inline',
  });
  const emptyRollouts: Plugin = {
    name: 'empty-rollouts',
    apply(kernel) {
      kernel.hooks.rollout.tapPromise('empty-rollouts', async () => ({ trajectories: [], metrics: {} }));
    },
  };
  const kernel = () => {
    const k = new Kernel();
    k.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(new RunDirectoryPlugin()), loaded(emptyRollouts)]);
    return k;
  };

  test("a run into a folder another run writes stops before moving that run's files; once free, it runs and lets go", async () => {
    const dir = project.path('kernel-run');
    const other = acquireRunLock(dir, 'x', 'drmas train other');
    writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step":1}\n');
    const log: string[] = [];
    await expect(kernel().run({ runDir: dir, log: (m) => log.push(m) })).rejects.toMatchObject({
      code: 'RUN_DIR_IN_USE',
      key: '--run-dir',
      message: expect.stringContaining(`(process ${process.pid}, started`),
    });
    expect(readdirSync(dir).sort()).toEqual(['metrics.jsonl', RUN_LOCK_FILE]);
    expect(readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')).toBe('{"step":1}\n');
    other.release();
    await kernel().run({ runDir: dir, log: (m) => log.push(m) });
    const files = readdirSync(dir);
    expect(files).not.toContain(RUN_LOCK_FILE);
    expect(files.filter((f) => f.startsWith('previous-'))).toHaveLength(1);
    expect(readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8').split('\n')[0]).toMatch(/^\{"step":1,/);
  });

  test('setup claims the folder for commands that drive the kernel (drmas collect, sft, dpo) until shutdown', async () => {
    const dir = project.path('kernel-setup');
    const k = kernel();
    await k.setup({ runDir: dir, runDirKey: '--run-dir', log: () => {} });
    expect(runLockHolder(dir)?.pid).toBe(process.pid);
    await expect(kernel().setup({ runDir: dir, runDirKey: '--out', log: () => {} })).rejects.toMatchObject({
      code: 'RUN_DIR_IN_USE',
      key: '--out',
    });
    await k.shutdown();
    expect(runLockHolder(dir)).toBeUndefined();
    expect(readdirSync(dir)).not.toContain(RUN_LOCK_FILE);
  });

  test('a setup whose hook fails lets the folder go', async () => {
    const dir = project.path('kernel-setup-fails');
    const failing: Plugin = {
      name: 'failing-setup',
      apply(k) {
        k.hooks.setup.tapPromise('failing-setup', async () => {
          throw new Error('no model');
        });
      },
    };
    const k = new Kernel();
    k.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(new RunDirectoryPlugin()), loaded(failing)]);
    await expect(k.setup({ runDir: dir, log: () => {} })).rejects.toThrow('no model');
    expect(runLockHolder(dir)).toBeUndefined();
    expect(readdirSync(dir)).not.toContain(RUN_LOCK_FILE);
  });

  test("a failed setup's claim is let go by the plugin that holds the lock, told by the failed hook; the kernel releases none itself", async () => {
    const events: string[] = [];
    const failing: Plugin = {
      name: 'failing-setup',
      register: (ctx) => {
        ctx.bind(RunDirectoryLock).toConstantValue({
          claim: (dir) => {
            events.push(`claim ${path.relative(project.dir, dir)}`);
            return true;
          },
          release: () => {
            events.push('release');
          },
        });
      },
      apply(k) {
        k.hooks.setup.tapPromise('failing-setup', async () => {
          throw new Error('no model');
        });
        k.hooks.failed.tap('failing-setup', (error, phase) => {
          events.push(`failed in ${phase}: ${error.message}`);
        });
      },
    };
    const k = new Kernel();
    k.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(failing)]);
    await expect(k.setup({ runDir: project.path('kernel-setup-fails-held'), log: () => {} })).rejects.toThrow('no model');
    expect(events).toEqual(['claim kernel-setup-fails-held', 'failed in setup: plugin failing-setup failed in hook setup: no model']);
  });

  test("the lock is the run-directory plugin's: without it nothing is claimed; with it the kernel claims through it", async () => {
    const writesFiles: Plugin = {
      name: 'writes-files',
      register: (ctx) => {
        ctx.bind(RunFile).toConstantValue({ path: 'own.jsonl', kind: 'steps' });
      },
      apply(k) {
        k.hooks.rollout.tapPromise('writes-files', async () => ({ trajectories: [], metrics: {} }));
      },
    };
    const bare = project.path('kernel-no-run-directory');
    const alone = new Kernel();
    alone.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(writesFiles)]);
    expect(alone.getAll(RunDirectoryLock)).toEqual([]);
    await alone.setup({ runDir: bare, log: () => {} });
    expect(runLockHolder(bare)).toBeUndefined();
    await alone.shutdown();

    const claims: string[] = [];
    let held: string | undefined;
    const recorded: Plugin = {
      name: 'recorded-lock',
      register: (ctx) => {
        ctx.bind(RunDirectoryLock).toConstantValue({
          claim: (dir, key) => {
            claims.push(`claim ${path.relative(project.dir, dir)} ${key}${held === dir ? ' (held)' : ''}`);
            if (held === dir) return false;
            held = dir;
            return true;
          },
          release: () => {
            claims.push('release');
            held = undefined;
          },
        });
      },
    };
    const k = new Kernel();
    k.configure(kernelConfig(1), [loaded(new AdvantagePlugin()), loaded(recorded), loaded(emptyRollouts)]);
    await k.run({ runDir: project.path('kernel-recorded'), log: () => {} });
    // `run` claims before it moves an earlier run aside; its `setup` finds the folder held; the end of the run lets go.
    expect(claims).toEqual(['claim kernel-recorded --run-dir', 'claim kernel-recorded --run-dir (held)', 'release']);
  });
});
