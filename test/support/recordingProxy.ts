import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackStandIn } from './loopbackServer.js';

/** What a client sent through the proxy: the request line and body as text, and the headers apart. */
export interface ProxiedRequest {
  method: string;
  url: string;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Headers that belong to one hop and are not passed on. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/**
 * An HTTP pass-through in front of a stand-in that records every request byte for byte, whatever the stand-in keeps:
 * a test can then search all a client sent a server.
 */
export class RecordingProxy extends LoopbackStandIn {
  readonly requests: ProxiedRequest[] = [];

  constructor(private readonly target: string) {
    super();
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    this.requests.push({ method: req.method ?? '', url: req.url ?? '', body: body.toString('utf8'), headers: req.headers });
    const headers = Object.entries(req.headers).flatMap(([name, value]) =>
      HOP_HEADERS.has(name) || value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value] as [string, string]],
    );
    const answer = await fetch(`${this.target}${req.url ?? '/'}`, { method: req.method, headers, body: body.length ? body : undefined });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  }
}
