/**
 * The real MLflow tracking server (`mlflow server`, scripts/python/peers.txt, SQLite store in a temporary folder) on
 * loopback: a drmas run's params, metrics and status read back with MLflow's own Python client; a deleted experiment,
 * params the server refuses, and the server killed mid-run each cost a warning, never the run.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, type Plugin, type UserConfig } from '@drmas/core';
import { mlflowName, MlflowPlugin } from '@drmas/plugin-mlflow';
import { describeInterop } from '../support/interopSuite.js';
import { readMetricLines } from '../support/runFiles.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { freePort, runPython, ServerProcess } from './support.js';

interface ReadRun {
  experiment: string;
  status: string;
  params: Record<string, string>;
  tags: Record<string, string>;
  metrics: Record<string, Array<[number, number]>>;
}

const scratch = new TempProject('interop-mlflow');
afterAll(() => scratch.dispose());

describeInterop(
  'MLflow (mlflow server and its Python client)',
  'peers',
  (python) => {
    const mlflow = path.join(path.dirname(python), 'mlflow');
    let uri: string;
    let port: number;
    let server: ServerProcess;
    let store: string;

    async function startServer(): Promise<void> {
      server = new ServerProcess(mlflow, [
        'server',
        '--backend-store-uri',
        `sqlite:///${path.join(store, 'mlflow.db')}`,
        '--default-artifact-root',
        path.join(store, 'artifacts'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--workers',
        '1',
      ]);
      await server.waitFor(`${uri}/health`, 180_000);
    }

    // One server for the file (its first start migrates the SQLite store, a minute here); the outage test restarts it.
    beforeAll(async () => {
      port = await freePort();
      uri = `http://127.0.0.1:${port}`;
      store = scratch.path('store');
      await startServer();
    });
    afterAll(() => server.stop());

    const read = (runDir: string) => {
      const { runId } = JSON.parse(readFileSync(path.join(runDir, 'mlflow.json'), 'utf8')) as { runId: string };
      return runPython<ReadRun>(python, 'mlflow_read.py', [uri, 'run', runId]);
    };

    async function train(config: UserConfig, name: string, logs: string[] = [], extra: Plugin[] = []): Promise<string> {
      const runDir = scratch.path(name);
      const { kernel } = await createKernel({
        cwd: REPO_ROOT,
        inline: {
          plugins: [
            ['bandit', { arms: 4, agents: ['proposer', 'checker'], groups: 2, samplesPerGroup: 4 }],
            new MlflowPlugin({ MLFLOW_TRACKING_URI: uri }),
            ...extra,
          ],
          trainer: { steps: 3, seed: 7 },
          ...config,
        },
      });
      await kernel.run({ runDir, log: (m) => logs.push(m) });
      return runDir;
    }

    test("a run's params, every metric at its step, and FINISHED, as MLflow's client reads them", async () => {
      const runDir = await train({ mlflow: { experiment: 'interop', tags: { owner: 'drmas' } } }, 'plain');
      const run = read(runDir);
      expect(run.experiment).toBe('interop');
      expect(run.status).toBe('FINISHED');
      expect(run.params['trainer.steps']).toBe('3');
      expect(run.params['trainer.seed']).toBe('7');
      expect(run.tags).toMatchObject({ 'mlflow.runName': 'plain', owner: 'drmas', 'drmas.runDir': runDir });
      const expected: Record<string, Array<[number, number]>> = {};
      for (const { step, ...metrics } of readMetricLines(runDir))
        for (const [key, value] of Object.entries(metrics)) (expected[mlflowName(key)] ??= []).push([step!, value]);
      expect(run.metrics).toEqual(expected);
    });

    test('a deleted experiment of the name: the run goes to <name>-2 with a warning, and finishes', async () => {
      await train({ mlflow: { experiment: 'team' } }, 'before-delete');
      runPython(python, 'mlflow_read.py', [uri, 'delete', 'team']);
      const logs: string[] = [];
      const runDir = await train({ mlflow: { experiment: 'team' } }, 'after-delete', logs);
      const run = read(runDir);
      expect([run.experiment, run.status]).toEqual(['team-2', 'FINISHED']);
      expect(logs.filter((l) => l.startsWith('warning: mlflow:'))).toEqual([
        'warning: mlflow: the experiment "team" is deleted, so this run goes to "team-2"; restore it (mlflow experiments restore) to log there again, or free the name (mlflow gc)',
      ]);
    });

    test('params the server refuses (a name twice after sanitizing, a name over 250 characters) cost a warning', async () => {
      const logs: string[] = [];
      const tooLong = 'k'.repeat(250);
      const runDir = await train(
        { mlflow: { tags: { 'a@b': 'first', a_at_b: 'second', [tooLong]: 'v', 'dir/': 'path-like' } } },
        'refused',
        logs,
      );
      const run = read(runDir);
      expect(run.status).toBe('FINISHED');
      expect(run.params).toMatchObject({
        'mlflow.tags.a_at_b': 'first',
        'mlflow.tags.a_at_b_2': 'second',
        'mlflow.tags.dir/_': 'path-like',
      });
      expect(Object.keys(run.params).some((key) => key.includes(tooLong))).toBe(false);
      expect(Object.keys(run.metrics).length).toBeGreaterThan(0);
      expect(logs.filter((l) => l.startsWith('warning: mlflow:'))).toEqual([
        expect.stringMatching(
          /^warning: mlflow: of the config's params, 1 the server refused were left out \(mlflow\.tags\.k{250}\); 1 had a name taken/,
        ),
      ]);
    });

    test('the server killed before step 1 is logged and back for step 2: one warning, the run goes on and ends FINISHED', async () => {
      const logs: string[] = [];
      const outage: Plugin = {
        name: 'outage',
        apply(kernel) {
          kernel.hooks.afterStep.tapPromise('outage', async ({ step }) => {
            // MetricsSinks write after afterStep: the server is down for step 1's line, back for step 2's.
            if (step === 1) await server.stop();
            if (step === 2) await startServer();
          });
        },
      };
      // One retry: with none, a request can meet a kept-alive connection the server has just closed (uvicorn closes
      // idle ones after 5 s), which Node's fetch reports as a failure.
      const runDir = await train({ mlflow: { retries: 1 } }, 'outage', logs, [outage]);
      expect(readMetricLines(runDir)).toHaveLength(3);
      const run = read(runDir);
      expect(run.status).toBe('FINISHED');
      expect([...new Set(Object.values(run.metrics).flatMap((points) => points.map(([step]) => step)))].sort()).toEqual([2, 3]);
      const warnings = logs.filter((l) => l.startsWith('warning: mlflow:'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /the metrics of step 1 were not logged \(they are in metrics\.jsonl\): MLflow runs\/log-batch failed: connection failed/,
      );
    });
  },
  (python) => (existsSync(path.join(path.dirname(python), 'mlflow')) ? undefined : 'the peers environment has no mlflow command'),
);
