import { DrmasError } from '../errors/DrmasError.js';
import { isToken, type ServiceKey, type Token } from './Token.js';

export interface BindingRecord {
  key: ServiceKey<unknown>;
  /** For named contributions (an estimator called `drmas`, an agent called `verifier`). */
  name?: string;
  /** The plugin that made the binding. */
  plugin: string;
}

/** How messages name a key: its token's label, or a class's name. */
export function describeKey(key: ServiceKey<unknown>): { name: string; label: string; configKey?: string } {
  return isToken(key) ? key : { name: key.name, label: key.name };
}

/**
 * Whether two keys name one service: a token is identified by its `Symbol.for` id, so the tokens of two loaded copies
 * of a package (its sources under jest, its `dist` loaded by name) are the same key, as they are to inversify.
 */
function sameKey(a: ServiceKey<unknown>, b: ServiceKey<unknown>): boolean {
  return a === b || (isToken(a) && isToken(b) && a.id === b.id);
}

/**
 * Remembers which plugin bound what, so errors can name plugins and `drmas info` can list contributions; and the
 * tokens this kernel has met, so inversify's messages (which only name a symbol) can be turned into the service's.
 */
export class BindingLedger {
  private readonly records: BindingRecord[] = [];
  private readonly tokens = new Map<symbol, Token<unknown>>();

  constructor(known: readonly Token<unknown>[] = []) {
    for (const token of known) this.remember(token);
  }

  /** Adds a token to those messages can name (tokens are also remembered when bound or asked for). */
  remember(key: ServiceKey<unknown>): void {
    if (isToken(key)) this.tokens.set(key.id, key);
  }

  record(record: BindingRecord): void {
    this.remember(record.key);
    if (record.name !== undefined) {
      const twin = this.records.find((r) => sameKey(r.key, record.key) && r.name === record.name);
      if (twin) {
        throw new DrmasError(
          'DUPLICATE_NAME',
          `${describeKey(record.key).label} "${record.name}" is registered twice: by plugin "${twin.plugin}" and by plugin "${record.plugin}"`,
          {
            hint: 'rename one of them, or remove one of the two plugins from the config',
          },
        );
      }
    }
    this.records.push(record);
  }

  bindingsOf(key: ServiceKey<unknown>, name?: string): BindingRecord[] {
    return this.records.filter((r) => sameKey(r.key, key) && (name === undefined || r.name === name));
  }

  namesOf(key: ServiceKey<unknown>): string[] {
    return this.records.filter((r) => sameKey(r.key, key) && r.name !== undefined).map((r) => r.name!);
  }

  /** The token inversify prints as `Symbol(drmas:AdvantageEstimator)`, if this kernel has met it. */
  tokenByDescription(description: string): Token<unknown> | undefined {
    for (const token of this.tokens.values()) {
      if (`Symbol(${token.id.description})` === description || token.id.description === description) return token;
    }
    return undefined;
  }

  /** Every named service this kernel knows (for `drmas info`), in the order they were met. */
  namedTokens(): Token<unknown>[] {
    return [...this.tokens.values()].filter((token) => token.named);
  }

  all(): readonly BindingRecord[] {
    return this.records;
  }
}
