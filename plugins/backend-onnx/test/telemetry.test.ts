import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * onnxruntime-node 1.30 keeps telemetry of its own (a device id and an event database under
 * `~/.cache/Microsoft/DeveloperTools/.onnxruntime`, a `/tmp/mat-debug-<pid>.log` per process) unless
 * `ORT_DISABLE_TELEMETRY` says otherwise. drmas loads it with that switch set to 1 unless the environment already sets
 * it. Each case is a fresh process (the switch is read when onnxruntime starts) with its own HOME, which creates and
 * runs a session through the built package's loader. onnxruntime keeps no telemetry on a CI machine (it looks for `CI`
 * and the variables below), so each child runs without them: otherwise the switch's `0` case could show nothing.
 */
const CI_VARIABLES = [
  'CI',
  'TF_BUILD',
  'GITHUB_ACTIONS',
  'GITLAB_CI',
  'CIRCLECI',
  'TRAVIS',
  'JENKINS_URL',
  'CODEBUILD_BUILD_ID',
  'BUILDKITE',
  'TEAMCITY_VERSION',
  'APPVEYOR',
  'BITBUCKET_BUILD_NUMBER',
];
const BUILT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const DIST = path.join(BUILT, 'ExecutionProvider.js');
const GRAPH = path.join(BUILT, 'onnx/GraphBuilder.js');
const SCRIPT = `
const { loadOnnxRuntime } = await import(${JSON.stringify(DIST)});
const { GraphBuilder } = await import(${JSON.stringify(GRAPH)});
const ort = await loadOnnxRuntime();
const g = new GraphBuilder('probe');
g.output(g.op('Neg', [g.input('x', 'float', [2])]), 'y', 'float', [2]);
const session = await ort.InferenceSession.create(g.toModelProto());
const { y } = await session.run({ x: new ort.Tensor('float32', new Float32Array([1, 2]), [2]) });
console.log(JSON.stringify({ y: Array.from(y.data), pid: process.pid, switch: process.env.ORT_DISABLE_TELEMETRY ?? null }));
`;

function runSession(telemetrySwitch: string | undefined) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'ort-home-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.ORT_DISABLE_TELEMETRY;
  delete env.XDG_CACHE_HOME;
  for (const name of CI_VARIABLES) delete env[name];
  if (telemetrySwitch !== undefined) env.ORT_DISABLE_TELEMETRY = telemetrySwitch;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { env, encoding: 'utf8', timeout: 60_000 });
  expect(child.stderr).toBe('');
  const out = JSON.parse(child.stdout) as { y: number[]; pid: number; switch: string | null };
  const debugLog = path.join(os.tmpdir(), `mat-debug-${out.pid}.log`);
  const result = {
    ...out,
    database: existsSync(path.join(home, '.cache/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db')),
    debugLog: existsSync(debugLog),
  };
  rmSync(home, { recursive: true, force: true });
  rmSync(debugLog, { force: true });
  return result;
}

describe("onnxruntime-node's telemetry", () => {
  it('is off when the environment does not say: no event database in HOME, no /tmp/mat-debug-<pid>.log', () => {
    expect(runSession(undefined)).toEqual({ y: [-1, -2], pid: expect.any(Number), switch: '1', database: false, debugLog: false });
  });

  it('stays as the environment says: ORT_DISABLE_TELEMETRY=0 keeps it on (the database and the log appear)', () => {
    expect(runSession('0')).toEqual({ y: [-1, -2], pid: expect.any(Number), switch: '0', database: true, debugLog: true });
  });
});
