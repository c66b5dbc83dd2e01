import 'reflect-metadata';

const AGENT_NAME = Symbol('drmas:agent-name');

/** Anything an agent role can be built from: a class (constructed with its options) or a factory. */
export type AgentConstructor<T = unknown> = new (options: Record<string, unknown>) => T;

/**
 * Class decorator naming an agent role: `@agent('verifier') class VerifierAgent { ... }`. The name is stored on the
 * class; a plugin registers the class with `ctx.agents.register(VerifierAgent)`.
 */
export function agent(name: string) {
  return <C extends AgentConstructor>(target: C): C => {
    Reflect.defineMetadata(AGENT_NAME, name, target);
    return target;
  };
}

/** The role name given by `@agent(...)`, or undefined. */
export function agentName(target: object): string | undefined {
  return Reflect.getMetadata(AGENT_NAME, target) as string | undefined;
}
