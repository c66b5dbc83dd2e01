import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { REPO_ROOT } from './support/tempProject.js';

/**
 * The Node versions `engines` promises, against what every installed package asks for (the lockfile records each
 * package's `engines`): a dependency bumped to a line that needs a newer Node fails here, not as a screen of
 * EBADENGINE warnings at a user's `npm install`.
 */

interface LockedPackage {
  version?: string;
  dev?: boolean;
  engines?: { node?: string };
}

const read = <T>(file: string): T => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8')) as T;
const locked = Object.entries(read<{ packages: Record<string, LockedPackage> }>('package-lock.json').packages).filter(
  ([location]) => location !== '',
);
const workspaceRange = read<{ engines: { node: string } }>('package.json').engines.node;
const publishedRange = read<{ engines: { node: string } }>('core/package.json').engines.node;
/** The current LTS, which .ci/run tests besides this machine's Node. */
const lts = readFileSync(path.join(REPO_ROOT, '.ci/node-lts'), 'utf8').trim();

/** The lowest version of each line a range allows (`^20.19.0 || >=24` -> 20.19.0, 24.0.0). */
function floors(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => semver.minVersion(comparators.map((c) => c.value).join(' '))!.version);
}

/** The packages among `packages` whose `engines.node` refuses one of `versions`, with what they ask for. */
function refusing(packages: Array<[string, LockedPackage]>, versions: string[]): string[] {
  return packages.flatMap(([location, p]) => {
    const range = p.engines?.node;
    const refused = range === undefined ? [] : versions.filter((version) => !semver.satisfies(version, range));
    return refused.length ? [`${location}@${p.version ?? ''} wants node ${range} (not ${refused.join(', ')})`] : [];
  });
}

describe('every package the lockfile installs runs on the Node versions engines names', () => {
  test('the published packages and their runtime dependencies: the lowest version core allows, and the current LTS', () => {
    expect(floors(publishedRange)).toEqual(['20.10.0']);
    expect(read<{ engines: { node: string } }>('models/package.json').engines.node).toBe(publishedRange);
    expect(
      refusing(
        locked.filter(([, p]) => !p.dev),
        [...floors(publishedRange), lts],
      ),
    ).toEqual([]);
  });

  test('the workspace, dev tools included: the lowest version of each line the root allows, and the current LTS', () => {
    expect(floors(workspaceRange)).toEqual(['20.19.0', '22.13.0', '24.0.0']);
    expect(semver.satisfies(lts, workspaceRange)).toBe(true);
    expect(refusing(locked, [...floors(workspaceRange), lts])).toEqual([]);
  });
});
