import { didYouMean, DrmasError } from '@drmas/core';
import { END, START, type WorkflowGraph } from './WorkflowGraph.js';

export interface GraphCheckOptions {
  /** The roles the orchestra declares: an agent node must call one of them. */
  agents: Iterable<string>;
  /** The config key messages point at (`orchestra.name`, `orchestra.graph`). */
  key: string;
  /** The file the graph came from, when a config file. */
  file?: string;
}

/**
 * Checks a graph before it runs: every edge joins existing nodes, each round has a start, every agent
 * node calls a declared agent, every node can be reached from the start, and every loop has an edge with a limit
 * (so an episode cannot cycle for ever). Throws CONFIG_INVALID naming the node or edge.
 */
export function validateGraph(graph: WorkflowGraph<unknown>, options: GraphCheckOptions): void {
  const names = [...graph.nodes.keys()];
  const agents = new Set(options.agents);
  const fail = (message: string, hint: string): never => {
    throw new DrmasError('CONFIG_INVALID', message, { key: options.key, file: options.file, hint });
  };
  for (const edge of graph.edges) {
    for (const [end, name] of [
      ['from', edge.from],
      ['to', edge.to],
    ] as const) {
      const reserved = end === 'from' ? START : END;
      if (name !== reserved && !graph.nodes.has(name)) {
        fail(
          `graph edge ${shown(edge.from)} -> ${shown(edge.to)}: node "${name}" does not exist.${didYouMean(name, names)}`,
          `the nodes are ${names.join(', ')}${end === 'to' ? ' (or "end" to end the step)' : ''}`,
        );
      }
    }
  }
  if (!graph.edges.some((edge) => edge.from === START)) fail('graph has no start edge', 'add one with .start(node)');
  for (const [name, node] of graph.nodes) {
    if (node.kind === 'agent' && !agents.has(node.agent)) {
      fail(
        `graph node "${name}" calls agent "${node.agent}", which the orchestra does not declare.${didYouMean(node.agent, agents)}`,
        `declare "${node.agent}" in the orchestra's agents (they are ${[...agents].join(', ')})`,
      );
    }
  }
  const reached = new Set<string>();
  const queue = [START];
  while (queue.length > 0) {
    const at = queue.pop()!;
    for (const edge of graph.edges) {
      if (edge.from === at && edge.to !== END && !reached.has(edge.to)) {
        reached.add(edge.to);
        queue.push(edge.to);
      }
    }
  }
  const unreachable = names.filter((name) => !reached.has(name));
  if (unreachable.length > 0) {
    fail(
      `graph node${unreachable.length > 1 ? 's' : ''} ${unreachable.map((n) => `"${n}"`).join(', ')} cannot be reached from the start`,
      'add an edge into each, or remove them',
    );
  }
  const cycle = unlimitedCycle(graph);
  if (cycle) {
    fail(
      `graph loop ${cycle.join(' -> ')} has no edge with a limit, so an episode could run it for ever`,
      `give one of its edges a limit (edge(from, to, { limit: n }) or "limit" in the config form)`,
    );
  }
}

/** A node's name in messages: the graph's start and end as the words a user writes. */
function shown(name: string): string {
  return name === END ? 'end' : name === START ? 'start' : name;
}

/** A cycle of edges without a limit (node names, the first repeated last), if any. */
function unlimitedCycle(graph: WorkflowGraph<unknown>): string[] | undefined {
  const next = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (edge.limit !== undefined || edge.from === START || edge.to === END) continue;
    next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to]);
  }
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    path.push(node);
    for (const to of next.get(node) ?? []) {
      if (state.get(to) === 'open') return [...path.slice(path.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.nodes.keys()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return undefined;
}
