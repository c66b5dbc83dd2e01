/** A DI token: a symbol that also carries, at the type level, the interface bound to it. */
export type Token<T> = symbol & { readonly __type?: T };

export interface TokenInfo {
  /** The interface name, e.g. `AdvantageEstimator`. */
  name: string;
  /** How a person calls one, e.g. `advantage estimator`. */
  label: string;
  /** The config key that picks among named bindings, e.g. `algorithm.advantage`. */
  configKey?: string;
  /** Named roles list their names in `drmas info`. */
  named: boolean;
}

const infos = new Map<symbol, TokenInfo>();

/**
 * Declares a token. Tokens are declared once, at module scope, next to their interface (same name). The symbol is
 * registered (`Symbol.for`), so two copies of one package in a process (a plugin installed twice, sources and
 * build side by side) still share their tokens.
 */
export function createToken<T>(name: string, info: Omit<TokenInfo, 'name' | 'named'> & { named?: boolean }): Token<T> {
  const token = Symbol.for(`drmas:${name}`) as Token<T>;
  infos.set(token, { name, named: false, ...info });
  return token;
}

export function tokenInfo(token: symbol): TokenInfo {
  return infos.get(token) ?? { name: token.description ?? String(token), label: token.description ?? 'service', named: false };
}

/** Finds a declared token by the description inversify prints (`Symbol(AdvantageEstimator)`). */
export function tokenByDescription(description: string): symbol | undefined {
  for (const token of infos.keys()) {
    if (`Symbol(${token.description})` === description || token.description === description) return token;
  }
  return undefined;
}

/** Every declared token of a named role (agents, estimators, backends, orchestras, ...), in declaration order. */
export function namedTokens(): symbol[] {
  return [...infos.entries()].filter(([, info]) => info.named).map(([token]) => token);
}
