import { describe, expect, test } from '@jest/globals';
import { createKernel, DrmasError, z } from '@drmas/core';
import envMathPlugin from '@drmas/plugin-env-math';
import orchestraPlugin, {
  blockGraph,
  call,
  createMathOrchestra,
  defineOrchestra,
  graphOf,
  NO_ACTION,
  END,
  START,
  route,
  routeKey,
  validateGraph,
  workflowGraph,
  type GraphContext,
  type WorkflowGraph,
} from '../src/index.js';
import { graphConfigSchema, graphFromConfig } from '../src/graph/graphConfig.js';

const agents = ['solver', 'verifier'];

function errorOf(graph: WorkflowGraph): DrmasError {
  try {
    validateGraph(graph, { agents, key: 'orchestra.graph' });
  } catch (error) {
    if (DrmasError.is(error)) return error;
    throw error;
  }
  throw new Error('the graph passed validation');
}

describe('graph validation names the node or edge at fault', () => {
  test('an edge to a node that does not exist, with a suggestion', () => {
    const graph = workflowGraph()
      .agent('solver', 'solver')
      .agent('verifier', 'verifier')
      .start('solver')
      .edge('solver', 'verifier')
      .build();
    const error = errorOf({ ...graph, edges: [...graph.edges, { from: 'verifier', to: 'verifer' }] });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('orchestra.graph');
    expect(error.message).toBe('graph edge verifier -> verifer: node "verifer" does not exist. Did you mean "verifier"?');
  });

  test('a node calling an agent the orchestra does not declare', () => {
    const error = errorOf(workflowGraph().agent('solve', 'sover').start('solve').build());
    expect(error.message).toBe('graph node "solve" calls agent "sover", which the orchestra does not declare. Did you mean "solver"?');
    expect(error.hint).toBe('declare "sover" in the orchestra\'s agents (they are solver, verifier)');
  });

  test('unreachable nodes, and a graph without a start', () => {
    const orphans = workflowGraph()
      .agent('solve', 'solver')
      .agent('check', 'verifier')
      .agent('again', 'solver')
      .start('solve')
      .edge('check', 'again');
    expect(errorOf(orphans.build()).message).toBe('graph nodes "check", "again" cannot be reached from the start');
    expect(errorOf(workflowGraph().agent('solve', 'solver').build()).message).toBe('graph has no start edge');
  });

  test('a loop without a limited edge, but not one with', () => {
    const loop = (limit?: number) =>
      workflowGraph()
        .agent('solve', 'solver')
        .agent('check', 'verifier')
        .start('solve')
        .edge('solve', 'check')
        .edge('check', END, { when: (ctx) => ctx.row.outputs.get('verifier')?.action?.content === 'approve' })
        .edge('check', 'solve', limit === undefined ? {} : { limit })
        .build();
    expect(errorOf(loop()).message).toBe(
      'graph loop solve -> check -> solve has no edge with a limit, so an episode could run it for ever',
    );
    expect(() => validateGraph(loop(2), { agents, key: 'orchestra.graph' })).not.toThrow();
  });

  test('the builder refuses a node added twice', () => {
    expect(() => workflowGraph().agent('solve', 'solver').agent('solve', 'verifier')).toThrow('graph node "solve" is added twice');
  });
});

describe('built-in blocks as graphs', () => {
  const shape = (graph: WorkflowGraph) => graph.edges.map((e) => [e.from, e.to, e.when !== undefined, e.limit !== undefined]);

  test('math: solver, then the verifier unless last loop; back to the solver (limited) unless approved', () => {
    // [from, to, guarded, limited], worked out from loopUntil(approve, sequential(call(solver), when(notLastLoop, call(verifier)))).
    expect(shape(blockGraph(createMathOrchestra().round!))).toEqual([
      ['verifier', 'solver', true, true],
      ['verifier', END, false, false],
      ['solver', 'verifier', true, false],
      ['solver', 'solver', true, true],
      ['solver', END, false, false],
      [START, 'solver', false, false],
    ]);
  });

  // The search preset's step: a route on the verifier's verdict, the last step forced to answer.
  const searchStep = route(
    'verifier',
    { yes: call('answerer'), no: call('searcher') },
    { select: (_row, context, output) => (context.isLastRound ? 'yes' : (routeKey(output) ?? 'no')) },
  );

  test('route: the verifier routes to the answerer or the searcher; both end the step', () => {
    expect(shape(blockGraph(searchStep))).toEqual([
      ['answerer', END, false, false],
      ['verifier', 'answerer', true, false],
      ['searcher', END, false, false],
      ['verifier', 'searcher', true, false],
      ['verifier', END, false, false],
      [START, 'verifier', false, false],
    ]);
  });

  test('the compiled graphs pass validation; a hand-written block has no graph', () => {
    const math = createMathOrchestra();
    expect(() => validateGraph(blockGraph(math.round!), { agents: Object.keys(math.agents), key: 'orchestra.name' })).not.toThrow();
    expect(() =>
      validateGraph(blockGraph(searchStep), { agents: ['verifier', 'answerer', 'searcher'], key: 'orchestra.name' }),
    ).not.toThrow();
    expect(() => blockGraph(async () => {})).toThrow('the orchestra has a block written by hand');
  });
});

describe('the config form', () => {
  const graph = {
    agents: {
      solver: { prompt: 'Solve {question}. {team_context}', tag: 'boxed' },
      checker: {
        prompt: 'Check: {team_context} <verify>approve</verify> or <verify>reject</verify>',
        tag: 'verify',
        values: ['approve', 'reject'],
      },
    },
    nodes: { solve: { agent: 'solver' }, check: { agent: 'checker' } },
    start: 'solve',
    edges: [
      { from: 'solve', to: 'check' },
      { from: 'check', to: 'end', when: { agent: 'checker', is: 'approve' } },
      { from: 'check', to: 'solve', limit: 1 },
    ],
    action: [{ agent: 'solver', content: 'text' as const }],
  };
  const kernelWith = (orchestra: Record<string, unknown>, executor: 'async' | 'lockstep' = 'async') =>
    createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [envMathPlugin(), orchestraPlugin()],
        orchestra: { name: 'graph', ...orchestra },
        rollout: { executor: { kind: executor } },
        env: { name: 'math', levels: [1], testSize: 4 },
      },
    });

  test('a valid graph loads, with a role of its own', async () => {
    await expect(kernelWith({ graph })).resolves.toBeDefined();
  });

  test('its mistakes fail at load, at orchestra.graph, with a suggestion', async () => {
    const broken = { ...graph, edges: [...graph.edges, { from: 'chek', to: 'end' }] };
    await expect(kernelWith({ graph: broken })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'orchestra.graph',
      message: expect.stringContaining('graph edge chek -> end: node "chek" does not exist. Did you mean "check"?') as unknown,
    });
    const unlimited = { ...graph, edges: graph.edges.map(({ limit: _limit, ...edge }) => edge) };
    await expect(kernelWith({ graph: unlimited })).rejects.toThrow('graph loop solve -> check -> solve has no edge with a limit');
  });

  test("{ lastRound } holds on the episode's last round; { lastStep }, its old name, the same", () => {
    for (const when of [{ lastRound: true }, { lastStep: true }]) {
      const config = graphConfigSchema.parse({ ...graph, edges: [{ from: 'solve', to: 'end', when }, ...graph.edges] });
      const edge = graphFromConfig(config).edges.find((e) => e.from === 'solve' && e.to === END)!;
      const at = (round: number, maxRounds: number) =>
        edge.when!({ round, maxRounds, isLastRound: round === maxRounds - 1 } as GraphContext<unknown>);
      expect([at(0, 2), at(1, 2), at(0, 1)]).toEqual([false, true, true]);
    }
  });

  test('rollout workers run lock-step, so the async executor refuses them', async () => {
    const withWorkers = createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [envMathPlugin(), orchestraPlugin()],
        rollout: { workers: 'bullmq', executor: { kind: 'async' } },
        env: { name: 'math', levels: [1], testSize: 4 },
      },
    });
    await expect(withWorkers).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'rollout.executor.kind' });
  });

  test('a graph without blocks needs the async executor', async () => {
    await expect(kernelWith({ graph }, 'lockstep')).rejects.toMatchObject({
      key: 'rollout.executor.kind',
      hint: 'set rollout.executor.kind: async',
    });
  });
});

describe('a typed per-episode state', () => {
  test('the schema gives the initial state and checks every change', () => {
    const graph = workflowGraph(z.object({ tries: z.number().int().default(0) }))
      .agent('solve', 'solver', { update: (_output, ctx) => ({ tries: ctx.state.tries + 1 }) })
      .start('solve')
      .build();
    expect(graph.state.parse({})).toEqual({ tries: 0 });
    expect(() => graph.state.parse({ tries: 0.5 })).toThrow();
    // The README's orchestra: a graph over a typed state is an orchestra's graph as it is.
    const orchestra = defineOrchestra({ name: 'solve-check', agents: createMathOrchestra().agents, graph, action: () => NO_ACTION });
    expect(graphOf(orchestra)).toBe(graph);
  });
});
