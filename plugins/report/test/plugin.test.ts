import { afterEach, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKernel, type Plugin } from '@drmas/core';
import reportPlugin, { PLUGIN_NAME, reportCommand, REPORT_DATA_ELEMENT_ID, type ProgressStream, type ReportData } from '../src/index.js';
import { syntheticRunDir } from './fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'drmas-report-plugin-'));
  dirs.push(dir);
  return dir;
}

function captureStream(isTTY = false): ProgressStream & { output: string } {
  return {
    isTTY,
    columns: 100,
    output: '',
    write(chunk: string) {
      this.output += chunk;
      return true;
    },
  };
}

/** A rollout producer and a stand-in trainer that reports two worker groups' metrics, plus a validation. */
const fakeTraining: Plugin = {
  name: 'fake-training',
  apply(kernel) {
    kernel.hooks.rollout.tapPromise('fake-training', async () => ({ trajectories: [], metrics: {} }));
    kernel.hooks.afterStep.tap('fake-training', ({ step, metrics }) => {
      metrics['outcome/mean'] = step / 10;
      metrics['outcome/std'] = 0.1;
      metrics['actor/solver/grad_norm'] = 1 / step;
      metrics['actor/verifier/grad_norm'] = 2 / step;
      metrics['actor/solver/pg_loss'] = -step / 100;
    });
    kernel.hooks.evaluate.tap('fake-training', ({ metrics }) => {
      metrics['val/avg@4'] = 0.25;
    });
  },
};

async function train(config: Record<string, unknown>, stream: ProgressStream) {
  let clock = 0;
  const { kernel } = await createKernel({
    cwd: tempDir(),
    inline: {
      plugins: [reportPlugin({ stream, now: () => (clock += 1000) }), fakeTraining],
      trainer: { steps: 4 },
      eval: { every: 2, atEnd: true },
      ...config,
    },
  });
  const runDir = path.join(tempDir(), 'run');
  const logs: string[] = [];
  await kernel.run({ runDir, log: (m) => logs.push(m) });
  return { kernel, runDir, logs };
}

describe('the report plugin in a run', () => {
  test('prints progress lines and a summary, and writes report.html at shutdown', async () => {
    const stream = captureStream(false);
    const { kernel, runDir, logs } = await train({ report: { progress: 'auto' } }, stream);
    expect(kernel.plugins.map((p) => p.plugin.name)).toContain(PLUGIN_NAME);
    expect(kernel.config.report).toEqual({ html: true, progress: 'auto' });
    expect(stream.output).toMatch(/^drmas: step 1\/4 \(25%\) \| outcome\/mean 0\.100 \| elapsed/m);
    expect(stream.output).toMatch(/^drmas: step 4\/4 \(100%\)/m);
    expect(stream.output).toMatch(/^ {2}solver +0\.25 +0\.5208 +pg_loss +-0\.04 +-0\.025$/m);
    expect(stream.output).toMatch(/^ {2}verifier +0\.5 +1\.042/m);
    // validation added by `evaluate` after afterStep is in the summary: the plugin kept the metrics objects
    expect(stream.output).toMatch(/^ {2}val\/avg@4 +0\.25$/m);

    const file = path.join(runDir, 'report.html');
    expect(logs).toContain(`report ${file}`);
    const html = readFileSync(file, 'utf8');
    const json = html.match(new RegExp(`id="${REPORT_DATA_ELEMENT_ID}">([\\s\\S]*?)</script>`))![1]!;
    const data = JSON.parse(json) as ReportData;
    expect(data.series['actor/verifier/grad_norm']?.values).toEqual([2, 1, 2 / 3, 0.5]);
    expect(data.series['val/avg@4']?.steps).toEqual([2, 4]);
    expect(data.summary.stepsPlanned).toBe(4);
    expect(html).toContain('data-chart="group-verifier-grad_norm"');
  });

  test('html: false and progress: off', async () => {
    const stream = captureStream(true);
    const { runDir } = await train({ report: { html: false, progress: 'off' } }, stream);
    expect(existsSync(path.join(runDir, 'report.html'))).toBe(false);
    expect(stream.output).not.toContain('\r');
    expect(stream.output).toMatch(/^run summary/);
  });

  test('an unknown report option names the key', async () => {
    await expect(train({ report: { progress: 'fancy' } }, captureStream())).rejects.toThrow(/report\.progress/);
  });
});

describe('drmas report RUN_DIR', () => {
  function io(cwd: string) {
    const out = { stdout: '', stderr: '' };
    return {
      out,
      io: {
        cwd,
        stdout: {
          write: (c: string) => {
            out.stdout += c;
            return true;
          },
        } as unknown as NodeJS.WritableStream,
        stderr: {
          write: (c: string) => {
            out.stderr += c;
            return true;
          },
        } as unknown as NodeJS.WritableStream,
      },
    };
  }

  test('re-renders a run directory and prints the summary', async () => {
    const runDir = syntheticRunDir();
    dirs.push(runDir);
    writeFileSync(path.join(runDir, 'report.html'), 'stale');
    const { out, io: cliIo } = io(path.dirname(runDir));
    const code = await reportCommand.run({ values: {}, positionals: [path.basename(runDir)] }, cliIo);
    expect(code).toBe(0);
    expect(readFileSync(path.join(runDir, 'report.html'), 'utf8')).toContain(REPORT_DATA_ELEMENT_ID);
    expect(out.stdout).toContain('run summary');
    expect(out.stdout.trimEnd().split('\n').pop()).toBe(path.join(runDir, 'report.html'));
    expect(out.stderr).toMatch(/note: metrics\.jsonl: skipped a partly written last line/);
  });

  test('--out and a missing directory', async () => {
    const runDir = syntheticRunDir();
    dirs.push(runDir);
    const target = path.join(runDir, 'elsewhere.html');
    const { out, io: cliIo } = io(runDir);
    expect(await reportCommand.run({ values: { out: 'elsewhere.html', quiet: true }, positionals: ['.'] }, cliIo)).toBe(0);
    expect(existsSync(target)).toBe(true);
    expect(out.stdout).toBe(`${target}\n`);
    await expect(reportCommand.run({ values: {}, positionals: ['nope'] }, cliIo)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      key: 'RUN_DIR',
    });
    await expect(reportCommand.run({ values: {}, positionals: [] }, cliIo)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      key: 'RUN_DIR',
    });
  });

  test('the manifest declares the command for discovery', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      drmas: { commands: Record<string, unknown> };
    };
    expect(manifest.drmas.commands.report).toEqual({ module: './dist/cli/reportCommand.js', summary: reportCommand.summary });
    expect(reportCommand.name).toBe('report');
  });
});
