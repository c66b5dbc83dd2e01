import type { ZodType } from 'zod';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { createToken } from '../di/Token.js';
import { DrmasError } from '../errors/DrmasError.js';
import { REDACTED, redactUrlsInText, urlCredentials } from './redactUrl.js';
import { redactValue, secretLeaves } from './secretLeaves.js';
import type { SecretKind } from './secretSchema.js';

/**
 * The run's credentials, kept in the process: what the config's secret keys hold (`secret()`, `secretUrl()`) and the
 * environment variables plugins read credentials from (`Plugin.secretEnv`, keys marked `secretEnvName()`). Everything
 * that leaves the process (files, trackers, pages, messages) goes through it.
 */
export interface Secrets {
  /** The config as it may be written or sent: every secret key's value as `redactedLeaf` shows it. */
  config(): ResolvedConfig;
  /** `text` with every credential of the run, and the user info of any URL in it, replaced by `***`. */
  redact(text: string): string;
  /** `error` itself when it quotes no credential; else a copy whose message, hint, file, stack and causes are redacted. */
  redactError(error: unknown): unknown;
}
export const Secrets = createToken<Secrets>('Secrets', { label: 'secrets' });

/**
 * Credentials shorter than this are not searched for in messages (`pw` would garble every line with a `pw` in it);
 * they are still hidden wherever the config is written, which is where their keys put them.
 */
export const MIN_SECRET_CHARS = 4;

/** Environment variables holding credentials, by the kind of value each holds. */
export type SecretEnv = Readonly<Record<string, Exclude<SecretKind, 'env'>>>;

interface Known {
  config: ResolvedConfig;
  /** Longest first, so a credential containing another is replaced whole. */
  values: string[];
}

/** `Secrets` over a config, its schema and the environment. */
export class ConfigSecrets implements Secrets {
  private known: Known | undefined;

  constructor(
    private readonly schema: ZodType,
    private readonly readConfig: () => ResolvedConfig,
    private readonly secretEnv: SecretEnv = {},
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {}

  config(): ResolvedConfig {
    return redactValue(this.schema, this.readConfig());
  }

  redact(text: string): string {
    let out = text;
    for (const value of this.values()) if (out.includes(value)) out = out.replaceAll(value, REDACTED);
    return redactUrlsInText(out);
  }

  redactError(error: unknown): unknown {
    if (typeof error === 'string') return this.redact(error);
    if (typeof error !== 'object' || error === null || typeof (error as Error).message !== 'string') return error;
    const original = error as Error;
    const message = this.redact(original.message);
    const stack = original.stack === undefined ? undefined : this.redact(original.stack);
    const cause = original.cause === undefined ? undefined : this.redactError(original.cause);
    const drmas = DrmasError.is(original) ? original : undefined;
    const hint = drmas?.hint === undefined ? undefined : this.redact(drmas.hint);
    const file = drmas?.file === undefined ? undefined : this.redact(drmas.file);
    if (
      message === original.message &&
      stack === original.stack &&
      cause === original.cause &&
      hint === drmas?.hint &&
      file === drmas?.file
    ) {
      return error;
    }
    const copy = drmas
      ? new DrmasError(drmas.code, message, { key: drmas.key, file, hint, cause })
      : Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { name: original.name });
    copy.stack = stack;
    return copy;
  }

  private values(): string[] {
    const config = this.readConfig();
    if (this.known?.config !== config) this.known = { config, values: this.collect(config) };
    return this.known.values;
  }

  private collect(config: ResolvedConfig): string[] {
    const found: string[] = [];
    const add = (kind: SecretKind, value: string | undefined) => {
      if (value === undefined) return;
      if (kind === 'url') found.push(...urlCredentials(value));
      else if (kind === 'value') found.push(value);
      else add('value', this.env[value]);
    };
    for (const leaf of secretLeaves(this.schema, config)) add(leaf.kind, leaf.value);
    for (const [name, kind] of Object.entries(this.secretEnv)) add(kind, this.env[name]);
    // As a JSON text quotes them too (`drmas info --json`, a quoted value in a message).
    const forms = found.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
    return [...new Set(forms)].filter((value) => value.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
  }
}
