import { defineTool, z, type Tool } from '@drmas/core';
import { Volume } from 'memfs';
import { fileTasks } from '../tasks/toolTaskKinds.js';

/** Bounds of one episode's filesystem: a file's size and how many files it holds. */
export const FILESYSTEM_LIMITS = { maxFileChars: 10_000, maxFiles: 64, maxPathChars: 200 };

/**
 * The absolute path `path` names inside the episode's filesystem (relative paths start at `/`). `..` that would
 * climb above `/` is refused rather than clamped, so a traversal attempt is an error the agent sees, never a
 * silently different file; so are NUL characters and over-long paths.
 */
export function episodePath(path: string): string {
  if (path.length > FILESYSTEM_LIMITS.maxPathChars) throw new Error(`the path is longer than ${FILESYSTEM_LIMITS.maxPathChars} characters`);
  if (path.includes('\0')) throw new Error('the path holds a NUL character');
  const parts: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) throw new Error(`"${path}" leads outside the filesystem: paths stay under /`);
      parts.pop();
    } else parts.push(segment);
  }
  return `/${parts.join('/')}`;
}

type Fs = InstanceType<typeof Volume>;

function countFiles(fs: Fs, dir = '/'): number {
  let count = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }) as { name: string; isDirectory(): boolean }[]) {
    const child = dir === '/' ? `/${entry.name}` : `${dir}/${entry.name}`;
    count += entry.isDirectory() ? countFiles(fs, child) : 1;
  }
  return count;
}

/**
 * Files in memory (memfs), one filesystem per episode, starting with the task's files: nothing of the host's is
 * reachable, and one episode never sees another's writes. `read`, `write` (parent folders made as needed) and `list`.
 * Its tasks are `file`.
 */
export const filesystemTool: Tool<{ op: 'read' | 'write' | 'list'; path: string; content?: string }> = defineTool({
  name: 'fs',
  description: 'files of this task',
  tasks: fileTasks,
  input: z.strictObject({
    op: z.enum(['read', 'write', 'list']),
    path: z.string().min(1),
    content: z.string().max(FILESYSTEM_LIMITS.maxFileChars).optional().describe('the text to write (op "write")'),
  }),
  run: ({ op, path, content }, { episodeState, taskFiles }) => {
    const fs = episodeState('volume', () =>
      Volume.fromJSON(Object.fromEntries(Object.entries(taskFiles).map(([p, text]) => [episodePath(p), text]))),
    );
    const at = episodePath(path);
    if (op === 'list') {
      if (!fs.existsSync(at)) throw new Error(`no such folder: ${at}`);
      if (!fs.statSync(at).isDirectory()) throw new Error(`${at} is a file`);
      const names = (fs.readdirSync(at, { withFileTypes: true }) as { name: string; isDirectory(): boolean }[]).map((e) =>
        e.isDirectory() ? `${e.name}/` : e.name,
      );
      return names.length ? names.sort().join('\n') : '(empty)';
    }
    if (op === 'read') {
      if (!fs.existsSync(at)) throw new Error(`no such file: ${at}`);
      if (fs.statSync(at).isDirectory()) throw new Error(`${at} is a folder`);
      return String(fs.readFileSync(at, 'utf8'));
    }
    if (content === undefined) throw new Error('op "write" needs "content"');
    if (at === '/') throw new Error('cannot write to /');
    if (fs.existsSync(at) && fs.statSync(at).isDirectory()) throw new Error(`${at} is a folder`);
    if (!fs.existsSync(at) && countFiles(fs) >= FILESYSTEM_LIMITS.maxFiles)
      throw new Error(`the filesystem holds at most ${FILESYSTEM_LIMITS.maxFiles} files`);
    fs.mkdirSync(at.slice(0, at.lastIndexOf('/')) || '/', { recursive: true });
    fs.writeFileSync(at, content);
    return `wrote ${content.length} characters to ${at}`;
  },
});
