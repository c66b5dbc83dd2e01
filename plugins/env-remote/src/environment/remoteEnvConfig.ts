import { envSection, z } from '@drmas/core';

/** `host:port` (an IPv6 host in brackets): what `drmas serve` prints and `--host`/`--port` bind. */
const ADDRESS = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** `env.remote`: where the environment servers are and how calls to them are made. */
export const remoteSettings = z.strictObject({
  /** `drmas serve` addresses (`127.0.0.1:50051`); sessions go round-robin over them, each pinned to its server. */
  urls: z
    // host:port carries no credential; marked so that a value refused for holding user info is not quoted with it
    .array(z.string().regex(ADDRESS, 'expected host:port, e.g. 127.0.0.1:50051').meta({ secret: 'url' }))
    .min(1)
    .max(256)
    .refine((urls) => new Set(urls).size === urls.length, 'lists a server twice'),
  /** The served environment to run (`math`, `code`, ...); may be left out when the servers serve one. */
  environment: z.string().min(1).optional(),
  /** Time one attempt of a call may take, in milliseconds. */
  deadlineMs: z.number().int().positive().max(3_600_000).default(30_000),
  /** Further attempts of a call that failed with UNAVAILABLE or DEADLINE_EXCEEDED (other failures are not retried). */
  retries: z.number().int().min(0).max(10).default(3),
  /** Wait before the first retry, doubled before each next one, in milliseconds. */
  backoffMs: z.number().int().min(0).max(60_000).default(200),
  /** The longest wait between retries, in milliseconds. */
  maxBackoffMs: z.number().int().min(0).max(600_000).default(5_000),
});
export type RemoteSettings = z.output<typeof remoteSettings>;

/** The keys env-remote adds to the `env` section. */
export const remoteEnvKeys = z.strictObject({ remote: remoteSettings.optional() });

/** What the remote environment reads of `env`: the shared keys and its own. */
export const remoteEnvSettings = envSection.extend(remoteEnvKeys.shape);
export type RemoteEnvSettingsInput = z.input<typeof remoteEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof remoteEnvKeys> {}
}
