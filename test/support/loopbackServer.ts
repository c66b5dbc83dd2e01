import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in for an HTTP service (a tracking server): a real server on 127.0.0.1 at a free port, answering with `handle`. */
export abstract class LoopbackStandIn {
  private server: Server | undefined;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  /** Starts listening; answers the base URL (no trailing slash). */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      // A handler that fails answers 500 with its error rather than rejecting unhandled, which would fail whichever
      // test file happens to run when it settles.
      this.handle(req, res).catch((error: unknown) => {
        if (res.headersSent) return void res.destroy();
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`stand-in: ${error instanceof Error ? error.message : String(error)}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops now, open keep-alive connections included (a no-op when not listening). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
