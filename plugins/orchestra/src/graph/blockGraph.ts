import { DrmasError, z } from '@drmas/core';
import type { Block, BlockContext, BlockSpec, RowPredicate } from '../blocks/Block.js';
import { resolveMaxLoops } from '../blocks/loopUntil.js';
import { routedBranch } from '../blocks/route.js';
import { END, START, type GraphContext, type GraphEdge, type GraphNode, type WorkflowGraph } from './WorkflowGraph.js';

type Guard = (ctx: GraphContext<unknown>) => boolean;

/** A `loopUntil`: the counter of its back edge (whose traversals are the iteration) and its `maxLoops`. */
interface GraphLoop {
  readonly counter: string;
  readonly maxLoops: (ctx: GraphContext<unknown>) => number;
}

/** An edge whose source is not known yet: the continuation a block hands to the block before it. */
interface Target {
  /** A node name or END; a loop's back edge gets its target once the loop's body is built. */
  to: string | { head?: string };
  guards: readonly Guard[];
  limit?: (ctx: GraphContext<unknown>) => number;
  counter?: string;
}

/** The lock-step context a block's predicate sees, from an episode's graph context. */
function blockContextOf(ctx: GraphContext<unknown>): BlockContext {
  return {
    round: ctx.round,
    maxRounds: ctx.maxRounds,
    isLastRound: ctx.isLastRound,
    step: ctx.round,
    isLastStep: ctx.isLastRound,
    settings: ctx.settings,
    loop: ctx.loop,
    callAgent: () => Promise.reject(new Error('a graph edge condition cannot call an agent')),
  };
}

const holds =
  (predicate: RowPredicate): Guard =>
  (ctx) =>
    predicate(ctx.row, blockContextOf(ctx));

/**
 * The workflow of an orchestra's built-in blocks as a graph, so the async executor runs it episode by episode:
 * `call` is an agent node (named after the agent, `agent#2` for its second call site), `sequential` chains, `when`
 * and `route` guard edges, and `loopUntil` is a back edge limited to `maxLoops - 1` traversals whose counter is the
 * loop's iteration. Each episode takes the path its row takes in lock-step.
 */
export function blockGraph(step: Block, configKey = 'orchestra.name'): WorkflowGraph {
  const nodes = new Map<string, GraphNode<unknown>>();
  const edges: Array<{ from: string; target: Target }> = [];
  const loopHeads = new Set<string>();
  let loops = 0;

  const uniqueName = (base: string): string => {
    let name = base;
    for (let n = 2; nodes.has(name); n++) name = `${base}#${n}`;
    return name;
  };
  const attach = (from: string, targets: readonly Target[]): void => {
    for (const target of targets) edges.push({ from, target });
  };
  const guarded = (guard: Guard, targets: readonly Target[]): Target[] =>
    targets.map((target) => ({ ...target, guards: [guard, ...target.guards] }));
  const inLoop = (loop: GraphLoop | undefined, guard: Guard): Guard =>
    loop ? (ctx) => guard({ ...ctx, loop: loopState(loop, ctx) }) : guard;

  const compile = (block: Block, next: readonly Target[], loop: GraphLoop | undefined): Target[] => {
    const spec: BlockSpec | undefined = block.spec;
    if (!spec) {
      throw new DrmasError('CONFIG_INVALID', 'the orchestra has a block written by hand, which the async executor cannot run as a graph', {
        key: configKey,
        hint: 'build the orchestra from call, sequential, when, loopUntil and route (or give it a graph), or set rollout.executor.kind: lockstep',
      });
    }
    switch (spec.kind) {
      case 'call': {
        const name = uniqueName(spec.agent);
        nodes.set(name, { kind: 'agent', agent: spec.agent });
        attach(name, next);
        return [{ to: name, guards: [] }];
      }
      case 'sequential':
        return spec.blocks.reduceRight<Target[]>((after, inner) => compile(inner, after, loop), [...next]);
      case 'when': {
        const yes = guarded(inLoop(loop, holds(spec.predicate)), compile(spec.then, next, loop));
        return [...yes, ...(spec.otherwise ? compile(spec.otherwise, next, loop) : next)];
      }
      case 'loopUntil': {
        const counter = `loop${++loops}`;
        const maxLoops = spec.maxLoops;
        const own: GraphLoop = { counter, maxLoops: (ctx) => resolveMaxLoops(maxLoops, blockContextOf(ctx)) };
        const head: { head?: string } = {};
        const done = inLoop(own, holds(spec.condition));
        const back: Target = { to: head, guards: [(ctx) => !done(ctx)], limit: (ctx) => own.maxLoops(ctx) - 1, counter };
        const entry = compile(spec.body, [back, ...next], own);
        const single = entry.length === 1 && entry[0]!.guards.length === 0 && typeof entry[0]!.to === 'string' ? entry[0]!.to : undefined;
        if (single !== undefined && single !== END && !loopHeads.has(single)) {
          head.head = single;
        } else {
          // The body starts with a choice (or another loop's head): a pass-through node gives the back edge one target.
          head.head = uniqueName(counter);
          nodes.set(head.head, { kind: 'function', run: () => undefined });
          attach(head.head, entry);
        }
        loopHeads.add(head.head);
        return [{ to: head.head, guards: [] }];
      }
      case 'route': {
        const name = uniqueName(spec.router);
        nodes.set(name, { kind: 'agent', agent: spec.router });
        const branchOf = (ctx: GraphContext<unknown>) => routedBranch(ctx.row, blockContextOf(ctx), spec.router, spec.branches, spec);
        for (const [branch, inner] of Object.entries(spec.branches)) {
          attach(
            name,
            guarded(
              inLoop(loop, (ctx) => branchOf(ctx) === branch),
              compile(inner, next, loop),
            ),
          );
        }
        attach(name, next);
        return [{ to: name, guards: [] }];
      }
    }
  };

  attach(START, compile(step, [{ to: END, guards: [] }], undefined));
  return {
    nodes,
    edges: edges.map(({ from, target }) => materialize(from, target)),
    state: z.object({}),
    configKey,
  };
}

function materialize(from: string, target: Target): GraphEdge<unknown> {
  const to = typeof target.to === 'string' ? target.to : target.to.head!;
  const { guards } = target;
  const edge: GraphEdge<unknown> = {
    from,
    to,
    ...(guards.length > 0 ? { when: (ctx: GraphContext<unknown>) => guards.every((guard) => guard(ctx)) } : {}),
    ...(target.limit ? { limit: target.limit, counter: target.counter } : {}),
  };
  return edge;
}

/** `ctx.loop` inside `loop`: its back edge's traversals so far are the iteration. */
function loopState(loop: GraphLoop, ctx: GraphContext<unknown>): BlockContext['loop'] {
  const maxLoops = loop.maxLoops(ctx);
  const iteration = ctx.traversals(loop.counter);
  return { iteration, maxLoops, isLast: iteration === maxLoops - 1 };
}
