import type { Plugin } from '@drmas/core';
import { Orchestra } from '@drmas/plugin-orchestra';
import { codeOrchestra, CoderAgent } from './codeOrchestra.js';
import { PlannerAgent, reflectiveCodeOrchestra, ReflectorAgent } from './reflectiveCode.js';

/** Registers the Coder, Planner and Reflector roles, the `code` orchestra and the `reflective-code` workflow. */
export const codeOrchestraPlugin: Plugin = {
  name: 'code-orchestra',
  register(ctx) {
    ctx.agents.register(CoderAgent);
    ctx.agents.register(PlannerAgent);
    ctx.agents.register(ReflectorAgent);
    ctx.provide(Orchestra, 'code', codeOrchestra);
    ctx.provide(Orchestra, 'reflective-code', reflectiveCodeOrchestra);
  },
};
