import { DrmasError, SeededRng, type ResolvedConfig } from '@drmas/core';
import type { HappoSettings } from '../config/criticConfig.js';

/** The roles HAPPO updates: every agent but those with `trainable: false`, by name. */
export function happoRoles(config: ResolvedConfig): string[] {
  return Object.entries(config.agents)
    .filter(([, entry]) => entry.trainable !== false)
    .map(([role]) => role)
    .sort();
}

/** A configured `critic.happo.order` must name every trainable role once. */
export function checkHappoOrder(settings: HappoSettings, roles: readonly string[]): void {
  if (settings.order === 'random') return;
  const listed = settings.order;
  const missing = roles.filter((role) => !listed.includes(role));
  const unknown = listed.filter((role) => !roles.includes(role));
  const repeated = listed.filter((role, i) => listed.indexOf(role) !== i);
  if (missing.length === 0 && unknown.length === 0 && repeated.length === 0) return;
  const problems = [
    missing.length ? `misses ${missing.join(', ')}` : '',
    unknown.length ? `names ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is no' : 'are no'} trainable role` : '',
    repeated.length ? `repeats ${[...new Set(repeated)].join(', ')}` : '',
  ].filter(Boolean);
  throw new DrmasError('CONFIG_INVALID', `critic.happo.order ${problems.join('; ')}`, {
    key: 'critic.happo.order',
    hint: `list every trainable role once, e.g. ${JSON.stringify(roles)}, or use "random"`,
  });
}

/**
 * The roles updated at training step `step` (1-based), in update order: a permutation of `roles` drawn from `seed`
 * and the step alone (so a resumed run draws the same), or the configured order; with `roundRobinEvery` N > 0 one
 * role, the next in the configured (else alphabetical) order every N steps.
 */
export function happoOrderAt(settings: HappoSettings, roles: readonly string[], seed: number, step: number): string[] {
  const fixed = settings.order === 'random' ? [...roles] : [...settings.order];
  if (settings.roundRobinEvery > 0) return [fixed[Math.floor((step - 1) / settings.roundRobinEvery) % fixed.length]!];
  if (settings.order !== 'random') return fixed;
  return new SeededRng(seed).fork(`happo/order/${step}`).shuffle(fixed);
}

/** `drmas info`'s line on the HAPPO update. */
export function describeHappo(settings: HappoSettings): string {
  const order = settings.order === 'random' ? 'a random order each step' : `the order ${settings.order.join(', ')}`;
  const ratio =
    settings.ratio === 'token' ? 'token-level ratios' : `sequence-level ratios (${settings.sequenceRatio} over a turn's tokens)`;
  const who =
    settings.roundRobinEvery > 0
      ? `one role per ${settings.roundRobinEvery} step(s), rotating in ${order.replace('a random order each step', 'alphabetical order')}`
      : `roles one after another in ${order}`;
  return `HAPPO: ${who}; M from ${ratio}, clipped to [${settings.factorClip.join(', ')}]`;
}
