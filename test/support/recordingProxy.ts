import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the proxy passed it on. */
export interface Seen {
  route: string;
  contentType: string | undefined;
  body: Buffer;
  /** The server's answer (also when it was dropped). */
  answer?: string;
}

/**
 * A loopback proxy to `target` that records each request (route, body, the answer) and drops the answer of those
 * `drop` picks: the server gets the request and answers, and the client's connection is destroyed instead of
 * answered (an answer lost on the way back).
 */
export class RecordingProxy {
  readonly seen: Seen[] = [];
  private server: Server | undefined;
  constructor(
    private readonly target: string,
    private readonly drop: (route: string, index: number) => boolean,
  ) {}
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  count(route: string): number {
    return this.seen.filter((s) => s.route === route).length;
  }
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const route = req.url!;
    const body = Buffer.concat(chunks);
    const index = this.seen.filter((s) => s.route === route).length;
    const seen: Seen = { route, contentType: req.headers['content-type'], body };
    this.seen.push(seen);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
    ) as Record<string, string>;
    const answer = await fetch(`${this.target}${route}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body });
    const text = await answer.text();
    seen.answer = text;
    // The server got the request and answered; the answer never reaches the client.
    if (this.drop(route, index)) return void req.socket.destroy();
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  }
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server?.close(() => resolve());
      this.server?.closeAllConnections();
    });
  }
}
