import { describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
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
    let signalled = false;
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

      // a request in flight when SIGTERM comes (its body half-sent) is still answered; then the process exits 0
      const body = JSON.stringify({ queries: [query], topk: 3 });
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      const answer = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
      });
      socket.write(`POST /retrieve HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
      socket.write(body.slice(0, 10));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = new Promise<void>((resolve) => {
        child.stderr.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('stops accepting connections')) resolve();
        });
      });
      child.kill('SIGTERM');
      signalled = true;
      await stopping;
      socket.end(body.slice(10));
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ result: [local!.map((h) => h.document)] });
    } finally {
      if (!signalled) child.kill('SIGTERM');
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

describe('drmas retriever serve: misuse is a clear error (exit 1, no stack trace)', () => {
  async function expectError(args: string[], expected: string, cwd?: string): Promise<string> {
    const { code, stderr, stdout } = await runCli(['retriever', 'serve', ...args], cwd);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain(expected);
    expect(stderr).toMatch(/\n {2}hint: .+\n$/);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr).not.toContain('INTERNAL');
    return stderr;
  }

  test.each([
    [['--port', '99999'], 'error INVALID_ARGUMENT (--port): expects a whole number from 0 to 65535, got "99999"'],
    [['--port=-1'], 'error INVALID_ARGUMENT (--port): expects a whole number from 0 to 65535, got "-1"'],
    [['--port', ''], 'error INVALID_ARGUMENT (--port): expects a whole number from 0 to 65535, got ""'],
    [['--port', '80.5'], 'error INVALID_ARGUMENT (--port): expects a whole number from 0 to 65535, got "80.5"'],
    [['--max-body-bytes', '0'], 'error INVALID_ARGUMENT (--max-body-bytes): expects a whole number from 1 to 268435456, got "0"'],
    [['--max-topk', 'many'], 'error INVALID_ARGUMENT (--max-topk): expects a whole number from 1 to 1000000, got "many"'],
    [['--idle-timeout', '1e3'], 'error INVALID_ARGUMENT (--idle-timeout): expects a whole number from 1 to 2147483647, got "1e3"'],
    [['--topk', '101'], 'error INVALID_ARGUMENT (--topk): expects a whole number from 1 to 100, got "101"'],
    [['--entities', '1000000000'], 'error INVALID_ARGUMENT (--entities): expects a whole number from 12 to 100000, got "1000000000"'],
    [
      ['--headers-timeout', '20000', '--request-timeout', '10000'],
      'error INVALID_ARGUMENT (--headers-timeout): 20000 ms is longer than --request-timeout (10000 ms)',
    ],
    [['--corpus', ''], 'error INVALID_ARGUMENT (--corpus): is empty; give the path of a Search-R1 corpus JSONL file'],
    [['--port', '0', '--host', 'no-such-host.invalid'], 'error INVALID_ARGUMENT (--host): cannot listen on no-such-host.invalid:0: '],
  ])('%j', async (args, expected) => {
    await expectError(args, expected);
  });

  test('a port in use names --port and the address', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      await expectError(['--port', String(port)], `error INVALID_ARGUMENT (--port): 127.0.0.1:${port} is already in use (EADDRINUSE)`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  test('a missing, unreadable or empty corpus names --corpus and the file', async () => {
    const project = new TempProject('retriever-cli').write({ 'empty.jsonl': '\n\n', 'folder/x.txt': '' });
    try {
      await expectError(
        ['--corpus', 'missing.jsonl'],
        `error DATASET_INVALID (--corpus): ${project.path('missing.jsonl')}: cannot read the file: ENOENT`,
        project.dir,
      );
      await expectError(
        ['--corpus', 'folder'],
        `error DATASET_INVALID (--corpus): ${project.path('folder')}: cannot read the file: EISDIR`,
        project.dir,
      );
      await expectError(
        ['--corpus', 'empty.jsonl'],
        `error DATASET_INVALID (--corpus): ${project.path('empty.jsonl')}: holds no documents`,
        project.dir,
      );
    } finally {
      project.dispose();
    }
  });

  test('--help shows every limit with its default', async () => {
    const { code, stdout } = await runCli(['retriever', '--help']);
    expect(code).toBe(0);
    const defaults: Array<[string, number]> = [
      ['--max-body-bytes N', 1_048_576],
      ['--max-queries N', 4096],
      ['--max-topk K', 100],
      ['--max-response-bytes N', 16_777_216],
      ['--max-json-depth N', 32],
      ['--max-connections N', 256],
      ['--headers-timeout MS', 10_000],
      ['--request-timeout MS', 30_000],
      ['--idle-timeout MS', 30_000],
      ['--keep-alive-timeout MS', 5000],
      ['--max-requests-per-socket N', 1000],
      ['--shutdown-grace MS', 10_000],
    ];
    for (const [flag, value] of defaults) expect(stdout).toMatch(new RegExp(`\\n {2}${flag} +.*\\(default ${value}\\)\\n`));
  });
});
