import { expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { startBin } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

// The built `drmas gateway` as a user starts it (needs `npx tsc -b`): a child process on a free loopback port.
describeSlow('drmas gateway in its own process', () => {
  test("serves the config's models and agents on loopback, answers a chat completion, and stops on SIGINT", async () => {
    const gateway = startBin(['gateway', '--config', 'plugins/gateway/test/fixtures/gateway.config.json', '--port', '0']);
    try {
      await gateway.waitFor(/gateway listening at (http:\/\/127\.0\.0\.1:\d+\/v1)/, 60_000);
      const baseURL = /gateway listening at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(gateway.output())![1]!;
      const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(['policy', 'spare', 'solver', 'verifier']);
      const answer = await client.chat.completions.create({
        model: 'solver',
        messages: [{ role: 'user', content: 'Solve: 1+2' }],
        max_tokens: 8,
      });
      expect(answer.choices[0]!.message.role).toBe('assistant');
      expect(answer.usage!.completion_tokens).toBeGreaterThan(0);
    } finally {
      gateway.child.kill('SIGINT');
    }
    const exit = await gateway.exited;
    expect(exit.code).toBe(0);
    expect(exit.stderr).toContain('SIGINT: stopping');
  });
});
