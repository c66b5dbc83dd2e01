/**
 * Babel-style name normalization. For kind `plugin` (and likewise `preset`):
 * - `search` -> `@drmas/plugin-search`, then `drmas-plugin-search`, then `search` as given
 * - `@drmas/search` -> `@drmas/plugin-search`; `@acme/x` -> `@acme/drmas-plugin-x`, then `@acme/x`
 * - `@acme` -> `@acme/drmas-plugin`
 * - names already carrying the prefix, and paths, pass through unchanged.
 */
export type ModuleKind = 'plugin' | 'preset';

export function isPathSpecifier(name: string): boolean {
  return (
    name.startsWith('./') ||
    name.startsWith('../') ||
    name.startsWith('/') ||
    name === '.' ||
    name.startsWith('file:') ||
    /^[A-Za-z]:[\\/]/.test(name)
  );
}

export function candidatePackageNames(name: string, kind: ModuleKind): string[] {
  const prefix = `drmas-${kind}`;
  const candidates: string[] = [];
  if (name.startsWith('@')) {
    const slash = name.indexOf('/');
    const scope = slash === -1 ? name : name.slice(0, slash);
    const rest = slash === -1 ? '' : name.slice(slash + 1);
    if (scope === '@drmas') {
      candidates.push(rest.startsWith(`${kind}-`) ? name : `@drmas/${kind}-${rest}`);
    } else if (rest === '') {
      candidates.push(`${scope}/${prefix}`);
    } else if (!rest.startsWith(prefix)) {
      candidates.push(`${scope}/${prefix}-${rest}`);
    }
  } else if (!name.startsWith(`${prefix}-`)) {
    candidates.push(`@drmas/${kind}-${name}`, `${prefix}-${name}`);
  }
  candidates.push(name);
  return [...new Set(candidates)];
}

/** The short name a package is known by: `@drmas/plugin-search` -> `search`, `drmas-plugin-foo` -> `foo`. */
export function shortName(packageName: string, kind: ModuleKind): string {
  return packageName.replace(new RegExp(`^@drmas/${kind}-`), '').replace(new RegExp(`^(@[^/]+/)?drmas-${kind}-`), '$1');
}
