import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import type { CliCommand } from '@drmas/core';
import { builtinConfigJson, builtinModel, readModelFolder, saveCheckpoint, Tokenizer } from '../src/index.js';
import { runCli } from '../../test/support/cliRunner.js';
import { TempProject } from '../../test/support/tempProject.js';

const project = new TempProject('models-cli');
afterAll(() => project.dispose());

/** Opens a model folder as an engine does (weights, then tokenizer), so the CLI reports what this package throws. */
const open: CliCommand = {
  name: 'open',
  summary: 'open a model folder',
  usage: 'drmas open DIR',
  help: [],
  options: {},
  positionals: true,
  async run({ positionals }) {
    const [dir] = positionals;
    if (dir === undefined) throw new Error('usage: drmas open DIR');
    await readModelFolder(dir);
    await Tokenizer.fromDirectory(dir);
    return 0;
  },
};

async function checkpoint(name: string): Promise<string> {
  const dir = project.path(name);
  const { weights, tokenizer } = builtinModel('tiny');
  await saveCheckpoint(dir, { config: builtinConfigJson('tiny', undefined, tokenizer), tensors: weights, tokenizer });
  return dir;
}

describe('a damaged model folder reaches the CLI as a user error', () => {
  test('a truncated model.safetensors: CHECKPOINT_INVALID naming the file, with a hint and no stack trace', async () => {
    const dir = await checkpoint('truncated');
    const weights = `${dir}/model.safetensors`;
    truncateSync(weights, statSync(weights).size - 100);
    const { code, stderr } = await runCli(['open', dir], project.dir, [open]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error CHECKPOINT_INVALID \(.*\): tensor "[^"]+": .*the file is truncated/);
    expect(stderr).toContain(`(${weights}): `);
    expect(stderr).toContain('\n  hint: the file is damaged or is not safetensors: download or save the checkpoint again\n');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  test('a tokenizer.json without its "model": TOKENIZER_INVALID naming the file', async () => {
    const dir = await checkpoint('no-model');
    const file = `${dir}/tokenizer.json`;
    const { model: _, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(rest));
    const { code, stderr } = await runCli(['open', dir], project.dir, [open]);
    expect(code).toBe(1);
    expect(stderr).toContain(`error TOKENIZER_INVALID (${file}): not a tokenizers JSON file: it has no "model" object\n  hint: `);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  test('an unsupported config.json key: CHECKPOINT_INVALID naming the file and the key', async () => {
    const dir = await checkpoint('gelu');
    const file = `${dir}/config.json`;
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), hidden_act: 'gelu' }));
    const { code, stderr } = await runCli(['open', dir], project.dir, [open]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `error CHECKPOINT_INVALID (${file}: hidden_act): unsupported activation "gelu"; only "silu" is implemented\n  hint: `,
    );
  });
});
