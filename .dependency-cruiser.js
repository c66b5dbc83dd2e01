// The package boundaries: which workspace package may depend on which, written down once (ARROWS below). Read by
// dependency-cruiser (`npm run check:boundaries`), which checks every source import, and by
// scripts/check-package-arrows.mjs, which checks every package.json's dependency lists against the same table.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const CORE = '@drmas/core';
const MODELS = '@drmas/models';
const ALGORITHMS = '@drmas/plugin-algorithms';
const BACKEND_ONNX = '@drmas/plugin-backend-onnx';
const BACKEND_TFJS = '@drmas/plugin-backend-tfjs';
const TRAINER = '@drmas/plugin-trainer';
const ORCHESTRA = '@drmas/plugin-orchestra';
const GATEWAY = '@drmas/plugin-gateway';

/** Any workspace package (presets and examples sit on top of everything). */
export const ANYTHING = '*';

/**
 * Production arrows (`dependencies`, `peerDependencies`, `optionalDependencies`, and imports outside `test/`): a
 * package may depend on the packages listed for it and on no other workspace package.
 */
export const ARROWS = {
  [CORE]: [],
  [MODELS]: [CORE],
  [ALGORITHMS]: [MODELS, CORE],
  [BACKEND_ONNX]: [MODELS, CORE],
  [BACKEND_TFJS]: [MODELS, CORE],
  '@drmas/plugin-backend-tinker': [MODELS, CORE],
  [TRAINER]: [ALGORITHMS, MODELS, CORE],
  [ORCHESTRA]: [ALGORITHMS, MODELS, CORE],
  [GATEWAY]: [ORCHESTRA, MODELS, CORE],
  '@drmas/plugin-rollout-bullmq': [ORCHESTRA, CORE],
  '@drmas/plugin-rollout-remote': [MODELS, CORE],
  // Environments stand alone: what they share (seeded generators, task pools, answer extraction, the tool-call text
  // formats chat templates teach, the Tool, AnswerFormat and QuestionSet services) is core's.
  '@drmas/plugin-env-code': [CORE],
  '@drmas/plugin-env-debate': [CORE],
  '@drmas/plugin-env-math': [CORE],
  '@drmas/plugin-env-remote': [CORE],
  '@drmas/plugin-env-search': [CORE],
  '@drmas/plugin-env-tools': [CORE],
  // Sinks.
  '@drmas/plugin-report': [CORE],
  '@drmas/plugin-tensorboard': [CORE],
  '@drmas/plugin-mlflow': [CORE],
  '@drmas/plugin-wandb': [CORE],
  '@drmas/preset-code': [ANYTHING],
  '@drmas/preset-dapo': [ANYTHING],
  '@drmas/preset-debate': [ANYTHING],
  '@drmas/preset-math': [ANYTHING],
  '@drmas/preset-search': [ANYTHING],
  '@drmas/preset-tools': [ANYTHING],
  'drmas-plugin-env-lists': [ANYTHING],
  'drmas-plugin-bandit': [ANYTHING],
};

const WORKSPACE_GLOBS = ['core', 'models', 'plugins', 'presets', 'examples'];

/** Every workspace package: its name, folder and declared dependencies. */
export function workspacePackages(root = '.') {
  const folders = WORKSPACE_GLOBS.flatMap((top) =>
    top === 'core' || top === 'models' ? [top] : readdirSync(`${root}/${top}`).map((name) => `${top}/${name}`),
  );
  return folders
    .filter((folder) => existsSync(`${root}/${folder}/package.json`))
    .map((folder) => {
      const json = JSON.parse(readFileSync(`${root}/${folder}/package.json`, 'utf8'));
      const names = (...lists) => [...new Set(lists.flatMap((list) => Object.keys(list ?? {})))];
      return {
        name: json.name,
        folder,
        production: names(json.dependencies, json.peerDependencies, json.optionalDependencies),
        development: names(json.devDependencies),
      };
    });
}

/** The packages `name` may depend on in production, or ANYTHING. */
export function allowedArrows(name) {
  return ARROWS[name] ?? [];
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const foldersPattern = (folders) => `^(${folders.map(escape).join('|')})/`;

/** The packages that depend on `name` in production, directly or through others (by their package.json files). */
export function dependentsOf(name, packages) {
  const found = new Set();
  const visit = (target) => {
    for (const p of packages)
      if (!found.has(p) && p.production.includes(target)) {
        found.add(p);
        visit(p.name);
      }
  };
  visit(name);
  return [...found];
}

/**
 * One dependency-cruiser rule per package and kind of import: its source (all but `test/`) importing outside its
 * arrows, or a package its package.json does not list; its tests importing a package that depends on it (a cycle;
 * tests may import any other package, through devDependencies).
 */
function packageRules(packages) {
  const others = (p, except) => packages.filter((q) => q !== p && !except.includes(q.name)).map((q) => q.folder);
  const rules = [];
  for (const p of packages) {
    const allowed = allowedArrows(p.name);
    const source = { path: `^${escape(p.folder)}/`, pathNot: `^${escape(p.folder)}/test/` };
    const forbidden = allowed.includes(ANYTHING) ? [] : others(p, allowed);
    if (forbidden.length)
      rules.push({
        name: `${p.name} arrows`,
        comment: `${p.name} may depend on ${allowed.join(', ') || 'no workspace package'} (ARROWS in .dependency-cruiser.js)`,
        severity: 'error',
        from: source,
        to: { path: foldersPattern(forbidden) },
      });
    const undeclared = others(p, p.production).filter((folder) => !forbidden.includes(folder));
    if (undeclared.length)
      rules.push({
        name: `${p.name} declared`,
        comment: `${p.name} imports a workspace package its package.json does not list in dependencies or peerDependencies`,
        severity: 'error',
        from: source,
        to: { path: foldersPattern(undeclared) },
      });
    const dependents = dependentsOf(p.name, packages);
    if (dependents.length)
      rules.push({
        name: `${p.name} test cycle`,
        comment: `a test of ${p.name} imports a package that depends on ${p.name} (tests may import any other package)`,
        severity: 'error',
        from: { path: `^${escape(p.folder)}/test/` },
        to: { path: foldersPattern(dependents.map((q) => q.folder)) },
      });
  }
  return rules;
}

export default {
  forbidden: [
    ...packageRules(workspacePackages()),
    {
      name: 'unresolvable',
      comment: 'an import that resolves to no file',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^node:' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|checkpoints)/' },
    // Type-only imports are arrows too: a package's declarations name the types it imports.
    tsPreCompilationDeps: true,
    // The tests' tsconfig resolves `@drmas/*` through the `drmas-source` condition to each package's src/.
    tsConfig: { fileName: 'tsconfig.test.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['drmas-source', 'import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
