import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { fetchText, parseRetryAfter, retryDelay, retrying, serverMessage, type FailedTry } from '../src/index.js';

describe('retryDelay', () => {
  test('doubles from delayMs and stops at maxDelayMs', () => {
    const schedule = { retries: 5, delayMs: 100, maxDelayMs: 700 };
    expect([1, 2, 3, 4, 5].map((retry) => retryDelay(schedule, retry))).toEqual([100, 200, 400, 700, 700]);
  });

  test('jitter scales the wait within [1 - jitter, 1 + jitter]', () => {
    const schedule = { retries: 3, delayMs: 1000, jitter: 0.1 };
    expect(retryDelay(schedule, 1, () => 0)).toBe(900);
    expect(retryDelay(schedule, 1, () => 0.5)).toBe(1000);
    expect(retryDelay(schedule, 2, () => 1)).toBe(2200);
  });
});

describe('retrying', () => {
  test('gives the first value, after the failed tries it reported', async () => {
    const heard: FailedTry[] = [];
    const result = await retrying(
      { retries: 3, delayMs: 1 },
      async (tryNumber) => (tryNumber < 3 ? { retry: `busy ${tryNumber}` } : { value: tryNumber * 10 }),
      (failed) => heard.push(failed),
    );
    expect(result).toEqual({ value: 30 });
    expect(heard).toEqual([
      { attempt: 1, reason: 'busy 1', willRetry: true, delayMs: 1 },
      { attempt: 2, reason: 'busy 2', willRetry: true, delayMs: 2 },
    ]);
  });

  test('stops after retries + 1 tries and returns every reason', async () => {
    let tries = 0;
    const result = await retrying({ retries: 2, delayMs: 0 }, async () => ({ retry: `no ${++tries}` }));
    expect(result).toEqual({ exhausted: { tries: 3, reasons: ['no 1', 'no 2', 'no 3'] } });
  });

  test("a try's afterMs (a server's Retry-After) replaces the schedule's wait", async () => {
    const heard: FailedTry[] = [];
    await retrying(
      { retries: 2, delayMs: 1 },
      async (tryNumber) => (tryNumber === 1 ? { retry: 'slow down', afterMs: 30 } : { value: 1 }),
      (failed) => heard.push(failed),
    );
    expect(heard).toEqual([{ attempt: 1, reason: 'slow down', willRetry: true, delayMs: 30 }]);
  });

  test('a thrown failure is not retried', async () => {
    let tries = 0;
    const failing = retrying({ retries: 5, delayMs: 0 }, async () => {
      tries++;
      throw new Error('final');
    });
    await expect(failing).rejects.toThrow('final');
    expect(tries).toBe(1);
  });
});

describe('fetchText over loopback', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/slow') return void setTimeout(() => response.end('late'), 500);
      if (request.url === '/busy') {
        response.writeHead(429, { 'retry-after': '7' });
        return void response.end('{}');
      }
      response.writeHead(request.url === '/fail' ? 503 : 200, { 'content-type': 'application/json' });
      response.end(request.url === '/fail' ? JSON.stringify({ error: { message: 'overloaded' } }) : '{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('answers carry status and text, errors included', async () => {
    expect(await fetchText(`${base}/`, { method: 'GET', timeoutMs: 2000 })).toEqual({ status: 200, text: '{"ok":true}' });
    const failed = await fetchText(`${base}/fail`, { method: 'GET', timeoutMs: 2000 });
    expect(failed).toMatchObject({ status: 503 });
    expect(serverMessage((failed as { text: string }).text)).toBe('overloaded');
  });

  test("a Retry-After header is read into the answer's retryAfterMs", async () => {
    expect(await fetchText(`${base}/busy`, { method: 'GET', timeoutMs: 2000 })).toEqual({ status: 429, text: '{}', retryAfterMs: 7000 });
  });

  test('a timeout and a refused connection are described, not thrown', async () => {
    expect(await fetchText(`${base}/slow`, { method: 'GET', timeoutMs: 50 })).toMatchObject({
      failure: 'no answer within 50 ms',
      timedOut: true,
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await fetchText(`http://127.0.0.1:${port}/`, { method: 'GET', timeoutMs: 2000 });
    expect(refused).toMatchObject({ timedOut: false, code: 'ECONNREFUSED' });
    expect((refused as { failure: string }).failure).toMatch(/^connection failed \(ECONNREFUSED/);
  });
});

describe('parseRetryAfter', () => {
  test('delay-seconds, an HTTP date (from now), and nothing for what it cannot read', () => {
    const now = Date.parse('Fri, 31 Dec 1999 23:59:00 GMT');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Fri, 31 Dec 1999 23:59:59 GMT', now)).toBe(59_000);
    expect(parseRetryAfter('Fri, 31 Dec 1999 23:58:00 GMT', now)).toBe(0);
    expect([parseRetryAfter(null, now), parseRetryAfter('', now), parseRetryAfter('soon', now), parseRetryAfter('-3', now)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('serverMessage', () => {
  test.each([
    ['{"error":{"message":"bad model"}}', 'bad model'],
    ['{"error":"plain"}', 'plain'],
    ['{"message":"sglang says"}', 'sglang says'],
    ['{"detail":[{"loc":["body"]}]}', '[{"loc":["body"]}]'],
    ['not json', 'not json'],
    ['', '(empty body)'],
  ])('%s -> %s', (text, said) => expect(serverMessage(text)).toBe(said));

  test('a long body is cut and its length given', () => {
    expect(serverMessage('x'.repeat(500), 10)).toBe('xxxxxxxxxx... (500 chars)');
  });
});
