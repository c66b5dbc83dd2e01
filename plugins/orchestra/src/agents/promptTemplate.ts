import type { PromptVariables } from './Agent.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Fills `{name}` placeholders from `variables`. Braces that name no variable are left as they are, so LaTeX such
 * as `\boxed{}` or `\frac{a}{b}` in a template survives.
 */
export function renderPrompt(template: string, variables: PromptVariables): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(variables, name) ? variables[name]! : whole));
}
