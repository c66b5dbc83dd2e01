import { agent } from '@drmas/core';
import { PromptedAgent } from './PromptedAgent.js';

// The roles of the built-in orchestras; their prompts and formats come from the orchestra's defaults.

@agent('solver')
export class SolverAgent extends PromptedAgent {}

@agent('verifier')
export class VerifierAgent extends PromptedAgent {}

@agent('searcher')
export class SearcherAgent extends PromptedAgent {}

@agent('answerer')
export class AnswererAgent extends PromptedAgent {}

@agent('pioneer')
export class PioneerAgent extends PromptedAgent {}

@agent('observer')
export class ObserverAgent extends PromptedAgent {}

export const ROLE_AGENTS = [SolverAgent, VerifierAgent, SearcherAgent, AnswererAgent, PioneerAgent, ObserverAgent] as const;
