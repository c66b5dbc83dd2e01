import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import { createTfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { applySearches, Bm25Retriever, generateKnowledgeBase, SearchEpisode, type SearchQuestion } from '@drmas/plugin-env-search';
import type { DemonstrationLine } from '@drmas/plugin-orchestra';
import { buildSearchBase, PRESET_DIR, writeSearchDemonstrations } from '../src/buildBase.js';
import { ANSWERER_PROMPT, SEARCH_DEFAULTS, SEARCHER_PROMPT, VERIFIER_PROMPT } from '../src/searchPreset.js';

const scratchRoot = path.join(PRESET_DIR, '..', '..', '.drmas-cache', 'tests');
mkdirSync(scratchRoot, { recursive: true });
const scratch = mkdtempSync(path.join(scratchRoot, 'preset-search-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const env = SEARCH_DEFAULTS.env as { seed: number; entities: number; topk: number; maxRounds: number };
const templates: Record<string, string> = { verifier: VERIFIER_PROMPT, searcher: SEARCHER_PROMPT, answerer: ANSWERER_PROMPT };

function readLines(file: string): DemonstrationLine[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as DemonstrationLine);
}

describe('search base checkpoint', () => {
  test('demonstrations: every agent, prompts exactly as the orchestra sends them, successful episodes', async () => {
    const { file, lines } = await writeSearchDemonstrations({ rounds: 1, promptsPerStep: 6, workDir: path.join(scratch, 'demos') });
    const demos = readLines(file);
    expect(demos).toHaveLength(lines);
    expect(new Set(demos.map((d) => d.agent))).toEqual(new Set(['verifier', 'searcher', 'answerer']));

    // Replays each episode with the environment's own pieces and renders the prompt each turn should have had.
    const kb = generateKnowledgeBase({ seed: env.seed, entities: env.entities });
    const byText = new Map(kb.questions.map((q) => [q.question, q]));
    const retriever = new Bm25Retriever(kb.documents);
    const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
    let episode: SearchEpisode | undefined;
    let episodes = 0;
    for (const demo of demos) {
      if (demo.agent === 'verifier' && !demo.prompt.includes('<search>')) {
        const text = /Question: ([^\n<]*)/.exec(demo.prompt)![1]!;
        episode = new SearchEpisode(byText.get(text) as SearchQuestion, { maxRounds: env.maxRounds });
        episodes++;
      }
      const template = templates[demo.agent];
      if (template === undefined) throw new Error(`a demonstration from an unknown agent: ${demo.agent}`);
      const content = template.replace('{observation}', episode!.observation());
      expect(demo.prompt).toBe(codec.applyChatTemplate([{ role: 'user', content }], { addGenerationPrompt: true }));
      if (demo.agent === 'searcher') {
        const query = /^<search>(.*)<\/search>$/.exec(demo.response)![1]!;
        await applySearches(retriever, [{ episode: episode!, query }], env.topk);
      }
      if (demo.agent === 'answerer') {
        episode!.applyAnswer(demo.response);
        expect(episode!.reward()).toBe(1);
      }
    }
    expect(episodes).toBe(6);
    expect(demos.filter((d) => d.agent === 'answerer')).toHaveLength(6);
  });

  testSlow(
    'buildSearchBase: one small round of SFT (prompt tokens trained too, as in the shipped stages 4-5) writes a loadable bf16 checkpoint',
    async () => {
      const outDir = path.join(scratch, 'base');
      const stderr = new PassThrough();
      const log: Buffer[] = [];
      stderr.on('data', (chunk: Buffer) => log.push(chunk));
      const code = await buildSearchBase({
        rounds: 1,
        promptsPerStep: 2,
        epochs: 1,
        batchSize: 8,
        promptLossWeight: 1,
        workDir: path.join(scratch, 'work'),
        outDir,
        io: { stdout: new PassThrough(), stderr, cwd: PRESET_DIR },
      });
      expect(code).toBe(0);
      expect(Buffer.concat(log).toString()).toMatch(/sft policy epoch 1\/1: nll [\d.]+/);
      const dir = path.join(outDir, 'policy');
      for (const name of ['config.json', 'model.safetensors', 'tokenizer.json']) expect(existsSync(path.join(dir, name))).toBe(true);
      expect(statSync(path.join(dir, 'model.safetensors')).size).toBeLessThan(8 * 1024 * 1024);
      const backend = await createTfjsPolicyBackend({ model: dir, runtime: 'wasm' });
      try {
        const prompt = backend.tokenizer!.encode('Verify: Question: Who?', { addSpecialTokens: false });
        const out = await backend.generate({ prompts: [prompt], maxNewTokens: 4, temperature: 0, seed: 0 });
        expect(out.tokenIds[0]?.length).toBeGreaterThan(0);
      } finally {
        backend.dispose();
      }
    },
  );
});
