import { z, type ZodType } from 'zod';

/**
 * What a key marked secret holds: `value`, a credential as a whole (an API key, a token); `url`, a URL that may carry
 * one in its user info or query (`redis://:PASSWORD@host`), of which only those parts are hidden; `env`, the name of
 * an environment variable holding a credential (the name is shown, the variable's value never is).
 */
export type SecretKind = 'value' | 'url' | 'env';

declare module 'zod' {
  interface GlobalMeta {
    /** The key holds a credential (see `SecretKind`): every copy of the config that leaves the process hides it. */
    secret?: SecretKind;
  }
}

/**
 * A config key holding a credential as a whole (an API key, a token): `***` in every copy of the config that leaves the
 * process (config.json, report.html, trackers' params, `drmas info`) and in messages.
 */
export function secret(): z.ZodString {
  return z.string().min(1).meta({ secret: 'value' });
}

/**
 * A config key holding a URL that may carry a credential: its user info and credential query parameters read `***`
 * wherever the config leaves the process (`redis://***@cache:6379`), its host stays readable. Other string checks
 * chain after it; `.meta({ secret: 'url' })` marks an existing string schema the same way.
 */
export function secretUrl(params?: Parameters<typeof z.url>[0]): z.ZodURL {
  return z.url(params).meta({ secret: 'url' });
}

/**
 * A config key naming the environment variable that holds a credential (`apiKeyEnv: 'TINKER_API_KEY'`): the name is
 * kept, the variable's value is kept out of every message.
 */
export function secretEnvName(): z.ZodString {
  return z.string().min(1).meta({ secret: 'env' });
}

/** The secret kind `schema` is marked with, looking through `.optional()`, `.default()` and the like; undefined if none. */
export function secretKindOf(schema: ZodType): SecretKind | undefined {
  for (let current: ZodType | undefined = schema; current;) {
    const kind = z.globalRegistry.get(current)?.secret;
    if (kind) return kind;
    const def = current.def as { type: string; innerType?: ZodType; in?: ZodType };
    current = def.type === 'pipe' ? def.in : def.innerType;
  }
  return undefined;
}
