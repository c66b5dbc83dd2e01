import { describe, expect, test } from '@jest/globals';
import { episodePath, filesystemTool, FILESYSTEM_LIMITS, ToolRegistry, ToolSession } from '../src/index.js';

const registry = new ToolRegistry([filesystemTool], { timeoutMs: 1000, maxOutputChars: 20_000 });
const fs = (session: ToolSession, args: Record<string, unknown>) => registry.run({ name: 'fs', arguments: args }, session);

describe('fs: an in-memory filesystem per episode', () => {
  test("an episode reads its task's files and its own writes; another episode sees neither", async () => {
    const first = new ToolSession({ '/notes/a.txt': 'alpha' });
    const second = new ToolSession({});
    expect(await fs(first, { op: 'read', path: '/notes/a.txt' })).toMatchObject({ ok: true, text: 'alpha' });
    expect(await fs(first, { op: 'write', path: 'out/b.txt', content: 'beta' })).toMatchObject({
      ok: true,
      text: 'wrote 4 characters to /out/b.txt',
    });
    expect(await fs(first, { op: 'read', path: '/out/./b.txt' })).toMatchObject({ ok: true, text: 'beta' });
    expect(await fs(first, { op: 'list', path: '/' })).toMatchObject({ ok: true, text: 'notes/\nout/' });
    expect(await fs(second, { op: 'read', path: '/out/b.txt' })).toMatchObject({ ok: false, text: 'error: no such file: /out/b.txt' });
    expect(await fs(second, { op: 'read', path: '/notes/a.txt' })).toMatchObject({ ok: false, text: 'error: no such file: /notes/a.txt' });
    expect(await fs(second, { op: 'list', path: '/' })).toMatchObject({ ok: true, text: '(empty)' });
  });

  test('paths that climb above / are refused, not clamped; so are NUL and over-long paths', async () => {
    const session = new ToolSession({ '/a/secret.txt': 's' });
    for (const path of ['../etc/passwd', '/a/../../etc/passwd', '..', 'a/../../x']) {
      expect(await fs(session, { op: 'read', path })).toMatchObject({
        ok: false,
        text: expect.stringMatching(/leads outside the filesystem/),
      });
    }
    expect(await fs(session, { op: 'write', path: '/../../tmp/x', content: 'x' })).toMatchObject({ ok: false, kind: 'failed' });
    expect(await fs(session, { op: 'read', path: 'a\0b' })).toMatchObject({ ok: false, text: 'error: the path holds a NUL character' });
    expect(await fs(session, { op: 'read', path: `/${'d'.repeat(FILESYSTEM_LIMITS.maxPathChars)}` })).toMatchObject({ ok: false });
    // Inside the root, .. is an ordinary step.
    expect(episodePath('/a/b/../secret.txt')).toBe('/a/secret.txt');
    expect(await fs(session, { op: 'read', path: '/a/b/../secret.txt' })).toMatchObject({ ok: true, text: 's' });
  });

  test('bad operations are errors the agent reads', async () => {
    const session = new ToolSession({ '/d/f.txt': 'x' });
    expect(await fs(session, { op: 'write', path: '/d/g.txt' })).toMatchObject({ ok: false, text: 'error: op "write" needs "content"' });
    expect(await fs(session, { op: 'read', path: '/d' })).toMatchObject({ ok: false, text: 'error: /d is a folder' });
    expect(await fs(session, { op: 'list', path: '/d/f.txt' })).toMatchObject({ ok: false, text: 'error: /d/f.txt is a file' });
    expect(await fs(session, { op: 'delete', path: '/d/f.txt' })).toMatchObject({ ok: false, kind: 'invalid_arguments' });
    expect(await fs(session, { op: 'write', path: '/big', content: 'x'.repeat(FILESYSTEM_LIMITS.maxFileChars + 1) })).toMatchObject({
      ok: false,
      kind: 'invalid_arguments',
    });
  });

  test(`at most ${FILESYSTEM_LIMITS.maxFiles} files`, async () => {
    const session = new ToolSession();
    for (let i = 0; i < FILESYSTEM_LIMITS.maxFiles; i++)
      expect(await fs(session, { op: 'write', path: `/f/${i}`, content: '' })).toMatchObject({ ok: true });
    expect(await fs(session, { op: 'write', path: '/f/one-more', content: '' })).toMatchObject({
      ok: false,
      text: expect.stringMatching(/at most 64 files/),
    });
    // Rewriting an existing file is fine.
    expect(await fs(session, { op: 'write', path: '/f/0', content: 'again' })).toMatchObject({ ok: true });
  });
});
