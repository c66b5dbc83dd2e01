#!/usr/bin/env node
// Checks every workspace package.json against the package boundaries of .dependency-cruiser.js (whose rules check the
// source imports): a production dependency (`dependencies`, `peerDependencies`, `optionalDependencies`) on a workspace
// package must be one of the package's ARROWS, and a devDependency (what its tests may import) must not be a package
// that depends on it. Every package must have an entry in ARROWS. Prints each violation; exits 1 when there is one.
//
//   node scripts/check-package-arrows.mjs [ROOT]
import { ANYTHING, allowedArrows, ARROWS, dependentsOf, workspacePackages } from '../.dependency-cruiser.js';

const packages = workspacePackages(process.argv[2] ?? '.');
const names = new Set(packages.map((p) => p.name));
const problems = [];
for (const p of packages) {
  if (!Object.hasOwn(ARROWS, p.name)) {
    problems.push(
      `${p.folder}/package.json: ${p.name} has no entry in ARROWS (.dependency-cruiser.js): add one listing what it may depend on`,
    );
    continue;
  }
  const allowed = allowedArrows(p.name);
  for (const dependency of p.production.filter((name) => names.has(name)))
    if (!allowed.includes(ANYTHING) && !allowed.includes(dependency))
      problems.push(
        `${p.folder}/package.json: ${p.name} depends on ${dependency}, which is not one of its arrows (${allowed.join(', ') || 'none'})`,
      );
  const dependents = new Set(dependentsOf(p.name, packages).map((q) => q.name));
  for (const dependency of p.development.filter((name) => dependents.has(name)))
    problems.push(`${p.folder}/package.json: devDependency ${dependency} depends on ${p.name} itself (a cycle through the tests)`);
}
for (const name of Object.keys(ARROWS))
  if (!names.has(name)) problems.push(`.dependency-cruiser.js: ARROWS names ${name}, which no workspace package is`);

for (const problem of problems) console.error(`error ${problem}`);
console.log(
  problems.length
    ? `x ${problems.length} package.json arrow violation${problems.length === 1 ? '' : 's'}`
    : `✔ ${packages.length} package.json files within their arrows`,
);
process.exit(problems.length ? 1 : 0);
