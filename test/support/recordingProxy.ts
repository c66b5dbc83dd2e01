import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackStandIn } from './loopbackServer.js';

/** What a client sent through the proxy, and the server's answer to it (kept also when the proxy dropped it). */
export interface ProxiedRequest {
  method: string;
  /** The request's path and query (`/api/v1/forward_backward`). */
  url: string;
  /** The body as text, and as the bytes sent (a protobuf body is not text). */
  body: string;
  bytes: Buffer;
  headers: Record<string, string | string[] | undefined>;
  answer?: string;
}

/** Headers that belong to one hop and are not passed on. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/**
 * An HTTP pass-through in front of a server that records every request byte for byte, so a test can search all a
 * client sent; `drop` picks requests whose answer is lost on the way back: the server gets the request and answers,
 * and the client's connection is destroyed instead of answered (`index` counts earlier requests to the same url).
 */
export class RecordingProxy extends LoopbackStandIn {
  readonly requests: ProxiedRequest[] = [];

  constructor(
    private readonly target: string,
    private readonly drop: (url: string, index: number) => boolean = () => false,
  ) {
    super();
  }

  /** How many requests went to `url`. */
  count(url: string): number {
    return this.requests.filter((r) => r.url === url).length;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const url = req.url ?? '/';
    const index = this.count(url);
    const seen: ProxiedRequest = { method: req.method ?? '', url, body: bytes.toString('utf8'), bytes, headers: req.headers };
    this.requests.push(seen);
    const headers = Object.entries(req.headers).flatMap(([name, value]) =>
      HOP_HEADERS.has(name) || value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value] as [string, string]],
    );
    let answer: Response;
    try {
      answer = await fetch(`${this.target}${url}`, { method: req.method, headers, body: bytes.length ? bytes : undefined });
    } catch (error) {
      // The server went away (a test stopping it with a request in flight): a gateway's answer, not a rejection.
      res.writeHead(502, { 'content-type': 'text/plain' });
      return void res.end(`proxy: ${this.target} did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = Buffer.from(await answer.arrayBuffer());
    seen.answer = text.toString('utf8');
    if (this.drop(url, index)) return void req.socket.destroy();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  }
}
