import { call } from '../blocks/call.js';
import { route, routeKey } from '../blocks/route.js';
import { actionFrom, defineOrchestra, NO_ACTION, type Orchestra } from './Orchestra.js';
import { ANSWERER_PROMPT, SEARCHER_PROMPT, SEARCH_VERIFIER_PROMPT } from './searchPrompts.js';

/**
 * Dr. MAS search, per environment step: the Verifier says whether the information is enough; `yes` (or the last
 * step) sends the row to the Answerer, `no` (or an unparseable verdict) to the Searcher, whose query the
 * environment runs.
 */
export function createSearchOrchestra(): Orchestra {
  return defineOrchestra({
    name: 'search',
    agents: {
      verifier: { prompt: SEARCH_VERIFIER_PROMPT, tag: 'verify', values: ['yes', 'no'], stop: ['</verify>'], invalidPenalty: 0.01 },
      searcher: { prompt: SEARCHER_PROMPT, tag: 'search', stop: ['</search>'], invalidPenalty: 0.01 },
      answerer: { prompt: ANSWERER_PROMPT, tag: 'answer', stop: ['</answer>'], invalidPenalty: 0.01 },
    },
    step: route(
      'verifier',
      { yes: call('answerer'), no: call('searcher') },
      {
        select: (_row, context, output) => (context.isLastStep ? 'yes' : (routeKey(output) ?? 'no')),
      },
    ),
    action: (row) => actionFrom(row, 'answerer', 'answer') ?? actionFrom(row, 'searcher', 'search') ?? NO_ACTION,
  });
}
