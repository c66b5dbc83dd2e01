import { describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Bm25Retriever, generateKnowledgeBase, RetrieverClient } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

describe('drmas retriever serve', () => {
  test('serves the knowledge base over HTTP; the client gets what the in-process retriever gives; SIGTERM stops it', async () => {
    const child = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), 'retriever', 'serve', '--port', '0', '--entities', '40', '--seed', '3'],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        const timer = setTimeout(() => reject(new Error(`no URL within 20 s: ${err}`)), 20_000);
        child.stderr.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          const match = /retriever on (http:\/\/[^\s]+)\/retrieve/.exec(err);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
        child.on('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`exited ${code}: ${err}`));
        });
      });
      const kb = generateKnowledgeBase({ seed: 3, entities: 40 });
      const query = kb.questions[0]!.question;
      const client = new RetrieverClient({ urls: [url], timeoutMs: 5000, maxRetries: 1 });
      const [remote] = await client.retrieve([query], 3);
      const [local] = await new Bm25Retriever(kb.documents).search([query], 3);
      expect(remote).toEqual(local);
    } finally {
      child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
  });

  test('a malformed corpus line: exit 1, DATASET_INVALID at --corpus naming the file and line, a hint, no stack', async () => {
    const project = new TempProject('retriever-cli').write({
      'corpus.jsonl': '{"id": 0, "contents": "\\"T\\"\\ntext"}\n{"id": 1, "title": "T"}\n',
    });
    try {
      const { code, stderr } = await runCli(['retriever', 'serve', '--port', '0', '--corpus', 'corpus.jsonl'], project.dir);
      expect(code).toBe(1);
      expect(stderr).toContain(
        `error DATASET_INVALID (--corpus): ${project.path('corpus.jsonl')}: line 2 (field "contents"): must be a string`,
      );
      expect(stderr).toMatch(/\n {2}hint: fix or remove this line.*\n$/);
      expect(stderr).not.toMatch(/\n\s+at /);
    } finally {
      project.dispose();
    }
  });
});
