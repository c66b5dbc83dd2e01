import { z, type EnvAction } from '@drmas/core';
import { agentEntrySchema } from '../agents/agentConfig.js';
import type { PromptedAgentOptions } from '../agents/agentConfig.js';
import { actionFrom, defineOrchestra, NO_ACTION, type Orchestra } from '../orchestras/Orchestra.js';
import { ORCHESTRA_LIMITS } from '../plugin/orchestraLimits.js';
import { END, START, type GraphContext, type GraphEdge, type GraphNode, type WorkflowGraph } from './WorkflowGraph.js';

/** The name edges of the config form end the step with. */
export const CONFIG_END = 'end';

/** An edge's condition in the config form: an agent's latest verdict, an invalid output, or the last round. */
const conditionSchema = z.union([
  /** The agent's latest output in this round is valid and its action content is `is` (`approve`, `yes`). */
  z.strictObject({ agent: z.string().min(1), is: z.string() }),
  /** The agent's latest output in this round is invalid. */
  z.strictObject({ agent: z.string().min(1), invalid: z.literal(true) }),
  /** The round is (or is not) the episode's last. */
  z.strictObject({ lastRound: z.boolean() }),
  /** @deprecated since 0.2.0: `lastRound`. */
  z.strictObject({ lastStep: z.boolean() }),
]);

/** A role of a config graph: the keys of `agents.<role>` plus its output format. */
const graphAgentSchema = agentEntrySchema.extend({
  prompt: z.string().min(1),
  /** The action tag (`verify`, `answer`, ...) or `boxed`. */
  tag: z.string().min(1),
  /** Allowed contents of the tag, e.g. `['approve', 'reject']`. */
  values: z.array(z.string().min(1)).min(1).optional(),
});

/**
 * `orchestra.graph`: a simple workflow graph written in the config. Its nodes call agents; edges are tried in order
 * from each node (`end` ends the round), a `limit` bounds a loop's back edge; `action` lists where the
 * step's action comes from (the first agent that ran in the step).
 */
export const graphConfigSchema = z.strictObject({
  /** The roles the graph's nodes call, with their prompt and format (overridable per role under `agents`). */
  agents: z.record(z.string().min(1), graphAgentSchema),
  /** Node name -> the agent it calls. */
  nodes: z.record(z.string().min(1), z.strictObject({ agent: z.string().min(1) })),
  /** The node each round starts at. */
  start: z.string().min(1),
  edges: z.array(
    z.strictObject({
      from: z.string().min(1),
      to: z.string().min(1),
      when: conditionSchema.optional(),
      limit: z.number().int().min(0).max(ORCHESTRA_LIMITS.maxLoops).optional(),
    }),
  ),
  /** Where the step's action comes from: the first listed agent that ran in the step. */
  action: z
    .array(
      z.strictObject({
        agent: z.string().min(1),
        type: z.string().min(1).default('answer'),
        /** `parsed`: the tag's content (invalid output gives an `invalid` action); `text`: the whole output. */
        content: z.enum(['parsed', 'text']).default('parsed'),
      }),
    )
    .min(1),
});

export type GraphConfig = z.output<typeof graphConfigSchema>;

function condition(when: z.output<typeof conditionSchema>): (ctx: GraphContext<unknown>) => boolean {
  if ('lastRound' in when) return (ctx) => ctx.isLastRound === when.lastRound;
  if ('lastStep' in when) return (ctx) => ctx.isLastRound === when.lastStep;
  if ('invalid' in when) return (ctx) => ctx.row.outputs.get(when.agent)?.valid === false;
  return (ctx) => {
    const output = ctx.row.outputs.get(when.agent);
    return output?.valid === true && output.action?.content === when.is;
  };
}

/** The config form as a graph (checked by `validateGraph` at `validate`, like every graph). */
export function graphFromConfig(config: GraphConfig): WorkflowGraph {
  const nodes = new Map<string, GraphNode<unknown>>(
    Object.entries(config.nodes).map(([name, node]) => [name, { kind: 'agent', agent: node.agent }]),
  );
  const edges: GraphEdge<unknown>[] = [{ from: START, to: config.start }];
  for (const edge of config.edges) {
    edges.push({
      from: edge.from,
      to: edge.to === CONFIG_END ? END : edge.to,
      ...(edge.when ? { when: condition(edge.when), label: JSON.stringify(edge.when) } : {}),
      ...(edge.limit !== undefined ? { limit: edge.limit } : {}),
    });
  }
  return { nodes, edges, state: z.object({}), configKey: 'orchestra.graph' };
}

/** The orchestra `graph`: the config form's roles, graph and action. */
export function configGraphOrchestra(config: GraphConfig): Orchestra {
  const agents: Record<string, PromptedAgentOptions> = { ...config.agents };
  return defineOrchestra({
    name: 'graph',
    agents,
    graph: graphFromConfig(config),
    action: (row) => {
      for (const source of config.action) {
        const action: EnvAction | undefined = actionFrom(row, source.agent, source.type, source.content);
        if (action) return action;
      }
      return NO_ACTION;
    },
  });
}
