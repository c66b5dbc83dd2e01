import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeSlow } from './support/describeSlow.js';
import { REPO_ROOT } from './support/tempProject.js';

/**
 * A user's `ONNXRUNTIME_NODE_INSTALL=skip npm install @drmas/core @drmas/preset-math`, emulated: every `@drmas/*`
 * workspace package is packed (as `npm publish` would ship it) and the project depends on the two tarballs, with
 * `overrides` standing in for the registry for the other `@drmas/*` packages. The project lies outside the
 * repository and npm runs with none of the workspace's settings, so this is what a new user gets: onnxruntime-node
 * (an optional dependency of the onnx engine) and no tfjs (an optional peer dependency of the presets).
 */

interface Manifest {
  name: string;
  private?: boolean;
  scripts?: Record<string, string>;
}

interface Run {
  code: number;
  stdout: string;
  /** stdout and stderr. */
  output: string;
}

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];
const OURS = /@drmas\/|onnxruntime|nuget|core-js|@tensorflow\//;
const TFJS = '@drmas/plugin-backend-tfjs';
let root: string;
let project: string;
let tarball: Record<string, string>;

/** The environment of a shell outside the repository: no npm settings inherited from `npm test`. */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'ONNXRUNTIME_NODE_INSTALL'));
  return { ...env, NODE_OPTIONS: '', ...extra };
}

function run(command: string, args: string[], cwd: string, extra: Record<string, string> = {}): Run {
  const result = spawnSync(command, args, { cwd, env: userEnv(extra), encoding: 'utf8', timeout: 300_000 });
  return {
    code: result.status ?? -1,
    stdout: result.stdout,
    output: `${result.stdout}${result.stderr}${result.error ? String(result.error) : ''}`,
  };
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** The workspace's published packages: `@drmas/*`, not private. */
function drmasPackages(): string[] {
  const dirs = [
    'core',
    'models',
    ...['plugins', 'presets'].flatMap((parent) => readdirSync(path.join(REPO_ROOT, parent)).map((d) => `${parent}/${d}`)),
  ];
  return dirs.filter((dir) => {
    if (!existsSync(path.join(REPO_ROOT, dir, 'package.json'))) return false;
    const m = manifest(path.join(REPO_ROOT, dir));
    return m.name.startsWith('@drmas/') && !m.private;
  });
}

/** Every installed package (nested ones too) that npm would run a script for at install time. */
function packagesWithInstallScripts(modules: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith('.')) continue;
      const folder = path.join(dir, entry);
      if (entry.startsWith('@')) {
        visit(folder);
        continue;
      }
      if (!existsSync(path.join(folder, 'package.json'))) continue;
      const m = manifest(folder);
      const scripts = INSTALL_SCRIPTS.filter((s) => m.scripts?.[s]);
      if (scripts.length || existsSync(path.join(folder, 'binding.gyp'))) found.push(`${m.name} (${scripts.join(', ') || 'binding.gyp'})`);
      if (existsSync(path.join(folder, 'node_modules'))) visit(path.join(folder, 'node_modules'));
    }
  };
  visit(modules);
  return found;
}

/** npm's warning lines that name our packages or their dependencies' install steps. */
function warningsAboutUs(output: string): string[] {
  return output.split('\n').filter((line) => /^npm warn/i.test(line) && OURS.test(line));
}

function train(runName: string, settings: string[] = []): Run & { metrics: Record<string, number> | undefined } {
  const set = ['trainer.steps=1', 'eval.atEnd=false', ...settings].flatMap((s) => ['--set', s]);
  const result = run('npx', ['drmas', 'train', ...set, '--run-dir', `runs/${runName}`], project);
  const file = path.join(project, 'runs', runName, 'metrics.jsonl');
  const metrics = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8').trim().split('\n')[0]!) as Record<string, number>) : undefined;
  return { ...result, metrics };
}

describeSlow('installing the packed packages into a fresh project', () => {
  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'drmas-install-'));
    const tarballs = path.join(root, 'tarballs');
    mkdirSync(tarballs);
    const packed = run(
      'npm',
      ['pack', '--json', '--pack-destination', tarballs, ...drmasPackages().flatMap((dir) => ['-w', dir])],
      REPO_ROOT,
    );
    expect(packed.code).toBe(0);
    const files = JSON.parse(packed.stdout) as Array<{ name: string; filename: string }>;
    tarball = Object.fromEntries(files.map((f) => [f.name, `file:${path.join(tarballs, f.filename)}`]));
    project = path.join(root, 'project');
    mkdirSync(project);
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify(
        {
          name: 'user-project',
          version: '1.0.0',
          private: true,
          type: 'module',
          dependencies: { '@drmas/core': tarball['@drmas/core'], '@drmas/preset-math': tarball['@drmas/preset-math'] },
          overrides: tarball,
        },
        null,
        2,
      ),
    );
    writeFileSync(
      path.join(project, 'drmas.config.json'),
      JSON.stringify({
        presets: ['math'],
        rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
        report: { html: false, progress: 'off' },
      }),
    );
  }, 120_000);
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('npm install brings onnxruntime-node without running its download, no tfjs, and no warning of ours', () => {
    const install = run('npm', ['install', '--no-audit', '--no-fund'], project, { ONNXRUNTIME_NODE_INSTALL: 'skip' });
    expect(install.output).not.toMatch(/npm error/);
    expect(install.code).toBe(0);
    const modules = path.join(project, 'node_modules');
    expect(packagesWithInstallScripts(modules)).toEqual(['onnxruntime-node (postinstall)']);
    // Its script downloads only the CUDA providers, which the variable (and npm 11.19+'s allowScripts) skips.
    expect(readdirSync(path.join(modules, 'onnxruntime-node', 'bin', 'napi-v6', 'linux', 'x64')).filter((f) => /cuda/.test(f))).toEqual([]);
    expect(existsSync(path.join(modules, '@tensorflow'))).toBe(false);
    expect(existsSync(path.join(modules, '@drmas', 'plugin-backend-tfjs'))).toBe(false);
    // npm 11.19+ lists the install script it skipped (onnxruntime-node's); nothing else of ours warns.
    expect(warningsAboutUs(install.output).filter((line) => !line.includes('install-scripts'))).toEqual([]);
    expect(existsSync(path.join(modules, '@drmas', 'preset-math', 'base.config.json'))).toBe(true);
    expect(existsSync(path.join(modules, '@drmas', 'preset-math', 'scripts', 'build-base.mjs'))).toBe(true);
  }, 600_000);

  test('drmas train runs a step of the math preset on onnx alone; asking for tfjs says what to install', () => {
    const result = train('onnx');
    expect(result.code).toBe(0);
    expect(result.output).toContain('training engine of policy (models.policy.backend: auto): onnx\n');
    expect(result.output).toContain("rollout engine of policy (models.policy.rollout: auto): onnx, the trainer's engine\n");
    expect(result.output).toMatch(/trains on onnx:policy \(onnxruntime-node 1\.30\.0/);
    expect(result.metrics?.step).toBe(1);
    expect(Number.isFinite(result.metrics?.['outcome/mean'])).toBe(true);
    const tfjs = train('tfjs', ['models.policy.backend=tfjs']);
    expect(tfjs.code).toBe(1);
    expect(tfjs.output).toContain(
      `error PLUGIN_NOT_FOUND (--set models.policy.backend=tfjs: models.policy.backend): models.policy.backend is "tfjs", which comes with ${TFJS}; it is not installed`,
    );
    expect(tfjs.output).toContain(`hint: npm i ${TFJS}`);
    const generate = run('npx', ['drmas', 'generate', '--model', 'tiny', '--prompt-ids', '1,2,3', '--max-new-tokens', '2'], project);
    expect(generate.code).toBe(0);
    const onTfjs = run('npx', ['drmas', 'score', '--model', 'tiny', '--ids', '1,2,3', '--engine', 'tfjs'], project);
    expect(onTfjs.code).toBe(1);
    expect(onTfjs.output).toContain(
      `error PLUGIN_NOT_FOUND (--engine): --engine is "tfjs", which comes with ${TFJS}; it is not installed (preset drmas:local-engines loads it where it is)`,
    );
    expect(onTfjs.output).toContain(`hint: npm i ${TFJS}`);
  }, 600_000);

  test('after npm i @drmas/plugin-backend-tfjs, tfjs trains', () => {
    // As `npm i @drmas/plugin-backend-tfjs` would: the dependency written as its override is (npm refuses them unequal).
    const manifestFile = path.join(project, 'package.json');
    const user = JSON.parse(readFileSync(manifestFile, 'utf8')) as { dependencies: Record<string, string> };
    writeFileSync(manifestFile, JSON.stringify({ ...user, dependencies: { ...user.dependencies, [TFJS]: tarball[TFJS] } }, null, 2));
    const install = run('npm', ['install', '--no-audit', '--no-fund'], project, { ONNXRUNTIME_NODE_INSTALL: 'skip' });
    expect(install.output).not.toMatch(/npm error/);
    expect(install.code).toBe(0);
    const result = train('tfjs-installed', ['models.policy.backend=tfjs']);
    expect(result.code).toBe(0);
    expect(result.output).toMatch(/trains on tfjs:policy/);
    expect(result.metrics?.step).toBe(1);
  }, 600_000);
});
