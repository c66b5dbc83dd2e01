import { afterAll, describe, expect, it } from '@jest/globals';
import { MathEnvironment } from '@drmas/plugin-env-math';
import { runCli } from '../../../test/support/cliRunner.js';
import { serve } from '../src/cli/serveCommand.js';
import { EnvironmentServer } from '../src/index.js';

const servers: EnvironmentServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close(0)));
});

describe('drmas serve: bad input', () => {
  it('names an unknown environment with the installed one it is closest to', async () => {
    const result = await runCli(['serve', '--environments', 'maht', '--port', '0'], undefined, [serve]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error PLUGIN_NOT_FOUND (--environments): unknown environment "maht": no plugin env-maht is installed');
    expect(result.stderr).toContain('hint: Did you mean "math"?');
  });

  it('names the port when it is in use', async () => {
    const environment = new MathEnvironment({ testSize: 1 });
    await environment.init();
    const taken = await EnvironmentServer.start({
      environments: new Map([['math', { environment, plugin: 'env-math' }]]),
      host: '127.0.0.1',
      port: 0,
      idleTimeoutMs: 1000,
      maxSessions: 10,
    });
    servers.push(taken);
    const result = await runCli(['serve', '--environments', 'math', '--port', String(taken.port)], undefined, [serve]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error INVALID_ARGUMENT (--port): port ${taken.port} on 127.0.0.1 is in use`);
    expect(result.stderr).toContain('hint: stop what listens there, pick another --port, or give --port 0 for a free one');
  });

  it('requires --environments', async () => {
    const result = await runCli(['serve', '--port', '0'], undefined, [serve]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error INVALID_ARGUMENT (--environments): is required');
  });
});
