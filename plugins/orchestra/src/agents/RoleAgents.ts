import { agent } from '@drmas/core';
import { PromptedAgent } from './PromptedAgent.js';

// The roles of the built-in orchestras (math, majority_vote and summary's solver, cory); their prompts and formats come
// from the orchestra's defaults. A role no plugin registers a class for is a plain PromptedAgent (`Workflow.agents`).

@agent('solver')
export class SolverAgent extends PromptedAgent {}

@agent('verifier')
export class VerifierAgent extends PromptedAgent {}

@agent('pioneer')
export class PioneerAgent extends PromptedAgent {}

@agent('observer')
export class ObserverAgent extends PromptedAgent {}

export const ROLE_AGENTS = [SolverAgent, VerifierAgent, PioneerAgent, ObserverAgent] as const;
