import { afterAll, describe, expect, test } from '@jest/globals';
import { resolveConfig, type z } from '@drmas/core';
import { schemaNodes } from '../support/schemaNodes.js';
import { REPO_ROOT } from '../support/tempProject.js';
import { workspacePlugins } from '../support/workspacePlugins.js';
import { recordFigures } from './support/figures.js';

/** Every plugin package of the workspace, loaded together, so a new plugin's sections are walked too. */
const PLUGINS = workspacePlugins();

interface ObjectSchema {
  path: string;
  strict: boolean;
}

/** Every object schema reachable from `schema`, with whether it refuses unknown keys (zod's catchall `never`). */
function objectSchemas(schema: z.ZodType): ObjectSchema[] {
  return schemaNodes(schema)
    .filter((node) => node.type === 'object')
    .map((node) => {
      const catchall = (node.schema.def as { catchall?: z.ZodType }).catchall;
      return { path: node.path || '(root)', strict: (catchall?.def as { type?: string } | undefined)?.type === 'never' };
    });
}

const found: ObjectSchema[] = [];

describe('every object of the config schema refuses unknown keys', () => {
  afterAll(() => {
    recordFigures('config-strictness', [
      { area: 'config', what: 'config schema objects strict', cases: found.length, passed: found.filter((o) => o.strict).length },
    ]);
  });

  test('the kernel and every plugin section, at every depth', async () => {
    expect(PLUGINS).toEqual(expect.arrayContaining(['@drmas/plugin-orchestra', '@drmas/plugin-trainer', '@drmas/plugin-env-search']));
    const { schema } = await resolveConfig({ cwd: REPO_ROOT, inline: { plugins: PLUGINS } });
    found.push(...objectSchemas(schema));
    // The walk reaches the nested objects, not only the sections.
    expect(found.map((o) => o.path)).toEqual(
      expect.arrayContaining([
        '(root)',
        'trainer',
        'agents.<name>',
        'agents.<name>.sampling',
        'agents.<name>.train',
        'models.<name>.optimizer',
        'models.<name>.optimizer.paramGroups[]',
        'algorithm.loss',
        'algorithm.dynamicSampling',
        'env.retriever',
        'rollout',
        'eval',
        'report',
      ]),
    );
    expect(found.filter((o) => !o.strict).map((o) => o.path)).toEqual([]);
  });
});
