import { actionFrom, call, defineOrchestra, NO_ACTION, route, routeKey, type Orchestra } from '@drmas/plugin-orchestra';
import { SEARCH_ORCHESTRA_PROMPTS } from './searchPrompts.js';

/**
 * `orchestra.name: search`, Dr. MAS search (env-search's `search` actions), per round: the Verifier says whether the information is enough; `yes` (or the last
 * step) sends the row to the Answerer, `no` (or an unparseable verdict) to the Searcher, whose query the
 * environment runs.
 */
export function createSearchOrchestra(): Orchestra {
  return defineOrchestra({
    name: 'search',
    agents: {
      verifier: {
        prompt: SEARCH_ORCHESTRA_PROMPTS.verifier,
        tag: 'verify',
        values: ['yes', 'no'],
        stop: ['</verify>'],
        invalidPenalty: 0.01,
      },
      searcher: { prompt: SEARCH_ORCHESTRA_PROMPTS.searcher, tag: 'search', stop: ['</search>'], invalidPenalty: 0.01 },
      answerer: { prompt: SEARCH_ORCHESTRA_PROMPTS.answerer, tag: 'answer', stop: ['</answer>'], invalidPenalty: 0.01 },
    },
    round: route(
      'verifier',
      { yes: call('answerer'), no: call('searcher') },
      {
        select: (_row, context, output) => (context.isLastRound ? 'yes' : (routeKey(output) ?? 'no')),
      },
    ),
    action: (row) => actionFrom(row, 'answerer', 'answer') ?? actionFrom(row, 'searcher', 'search') ?? NO_ACTION,
  });
}
