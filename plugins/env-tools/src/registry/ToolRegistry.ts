import { closestMatches, DrmasError, z, type ParsedToolCall, type Tool, type ToolCallBlock, type ToolContext } from '@drmas/core';

/** Why a call gave the agent an error instead of a result. */
export type ToolErrorKind = 'malformed' | 'unknown_tool' | 'invalid_arguments' | 'timeout' | 'failed';

export type ToolOutcome = { ok: true; name: string; text: string } | { ok: false; name?: string; kind: ToolErrorKind; text: string };

export interface ToolRegistryOptions {
  /** Time limit of a call whose tool names none. */
  timeoutMs: number;
  /** Characters of a result the agent reads; the rest is cut with a note. */
  maxOutputChars: number;
}

/** A tool's entry for chat templates and OpenAI clients: `{ type: 'function', function: { name, description, parameters } }`. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** The state one episode's tools keep (a filesystem, a REPL's history), created on first use. */
export class ToolSession {
  private readonly state = new Map<string, unknown>();

  /** `files`: the files the episode's task starts with. */
  constructor(readonly files: Readonly<Record<string, string>> = {}) {}

  episodeState<S>(key: string, create: () => S): S {
    if (!this.state.has(key)) this.state.set(key, create());
    return this.state.get(key) as S;
  }
}

/**
 * The tools one environment offers, by name. `call` never throws for anything the agent wrote: a malformed call, an
 * unknown tool (with the closest names), arguments the schema refuses (with zod's issues), a handler that throws or
 * passes its time limit each come back as an error text the agent reads.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();

  constructor(
    tools: readonly Tool[],
    private readonly options: ToolRegistryOptions,
  ) {
    for (const tool of tools) {
      if (this.tools.has(tool.name))
        throw new DrmasError('CONFIG_INVALID', `two tools are called "${tool.name}"`, {
          key: 'env.tools.enabled',
          hint: 'list each tool once; a plugin adding a tool must give it a name of its own',
        });
      this.tools.set(tool.name, tool);
    }
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  /** JSON schemas of the tools' inputs, as chat templates and OpenAI clients take them. */
  schemas(): ToolSchema[] {
    return [...this.tools.values()].map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: inputSchema(tool) },
    }));
  }

  /** One line per tool for a prompt: `name {"arg": type}: description` (short: small models read every token). */
  listing(): string {
    return [...this.tools.values()]
      .map((tool) => {
        const properties = (inputSchema(tool).properties ?? {}) as Record<string, { type?: string; enum?: unknown[] }>;
        const args = Object.entries(properties).map(
          ([key, s]) => `"${key}": ${s.enum ? s.enum.map((v) => JSON.stringify(v)).join('|') : (s.type ?? 'any')}`,
        );
        return `${tool.name} {${args.join(', ')}}: ${tool.description}`;
      })
      .join('\n');
  }

  /** Runs one call the agent wrote (parsed or not) and returns what the agent reads. */
  async call(block: ToolCallBlock, session: ToolSession): Promise<ToolOutcome> {
    if (!block.ok) return { ok: false, kind: 'malformed', text: `error: ${block.error}` };
    return this.run(block.call, session);
  }

  async run(call: ParsedToolCall, session: ToolSession): Promise<ToolOutcome> {
    const tool = this.tools.get(call.name);
    if (!tool) {
      const close = closestMatches(call.name, this.tools.keys());
      const suggestion = close.length ? ` Did you mean ${close.map((n) => `"${n}"`).join(' or ')}?` : '';
      return {
        ok: false,
        kind: 'unknown_tool',
        text: `error: no tool is called "${call.name}".${suggestion} Tools: ${this.names.join(', ')}`,
      };
    }
    const args = argumentsOf(call.arguments);
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ');
      return { ok: false, name: tool.name, kind: 'invalid_arguments', text: `error: invalid arguments for ${tool.name}: ${issues}` };
    }
    const timeoutMs = tool.timeoutMs ?? this.options.timeoutMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new Error(`${tool.name} passed its time limit of ${timeoutMs} ms`));
        resolve('timeout');
      }, timeoutMs);
    });
    const context: ToolContext = {
      signal: controller.signal,
      timeoutMs,
      episodeState: (key, create) => session.episodeState(`${tool.name}:${key}`, create),
      taskFiles: session.files,
    };
    try {
      const result = await Promise.race([Promise.resolve().then(() => tool.run(parsed.data, context)), deadline]);
      if (result === 'timeout')
        return { ok: false, name: tool.name, kind: 'timeout', text: `error: ${tool.name} took longer than ${timeoutMs} ms` };
      return { ok: true, name: tool.name, text: this.bounded(String(result)) };
    } catch (error) {
      return { ok: false, name: tool.name, kind: 'failed', text: this.bounded(`error: ${(error as Error)?.message ?? String(error)}`) };
    } finally {
      clearTimeout(timer);
    }
  }

  private bounded(text: string): string {
    const max = this.options.maxOutputChars;
    return text.length <= max ? text : `${text.slice(0, max)} ... (${text.length - max} more characters cut)`;
  }
}

function inputSchema(tool: Tool): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

/** OpenAI clients send arguments as a JSON string of an object; templates write the object itself. */
function argumentsOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
