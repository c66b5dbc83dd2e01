import { describe, expect, test } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RecordingProxy } from './support/recordingProxy.js';

describe('RecordingProxy (test support)', () => {
  test('answers 502 when its server is gone, instead of leaving the client waiting and the failure unhandled', async () => {
    // A port that was just free: nothing listens there, so the proxy's own fetch is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const proxy = new RecordingProxy(gone);
    const base = await proxy.start();
    try {
      const answer = await fetch(`${base}/api/v1/healthz`, { signal: AbortSignal.timeout(10_000) });
      expect(answer.status).toBe(502);
      expect(await answer.text()).toContain(`proxy: ${gone} did not answer`);
      expect(proxy.requests.map((r) => r.url)).toEqual(['/api/v1/healthz']);
    } finally {
      await proxy.stop();
    }
  });
});
