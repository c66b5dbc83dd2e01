import { DrmasError, Environment, InfoSection, type ApplyContext, type Plugin, type PluginConfig, type RegisterContext } from '@drmas/core';
import { RemoteEnvironment } from '../environment/RemoteEnvironment.js';
import { remoteEnvKeys } from '../environment/remoteEnvConfig.js';

const envRemoteSchema = { env: remoteEnvKeys };

export const PLUGIN_NAME = 'env-remote';

/**
 * Provides the `remote` Environment (`env.name: remote`): the episodes of an environment that `drmas serve`
 * processes host (`env.remote.urls`), over gRPC. Adds `env.remote` to the `env` section; the `drmas serve` command
 * comes with the package.
 */
export class EnvRemotePlugin implements Plugin<unknown, typeof envRemoteSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = envRemoteSchema;
  private environment?: RemoteEnvironment;

  register(ctx: RegisterContext<PluginConfig<typeof envRemoteSchema>>): void {
    const settings = () => ctx.config.env;
    this.environment = new RemoteEnvironment(settings);
    ctx.provide(Environment, 'remote', this.environment);
    ctx.bind(InfoSection).toConstantValue({
      title: 'remote environment',
      describe: () => {
        const { remote } = settings();
        if (!remote) return { note: 'env.remote is not set (env.name: remote needs env.remote.urls)' };
        return {
          urls: remote.urls,
          environment: remote.environment ?? '(the one the servers serve)',
          deadlineMs: remote.deadlineMs,
          retries: remote.retries,
          backoffMs: remote.backoffMs,
          maxBackoffMs: remote.maxBackoffMs,
        };
      },
    });
  }

  apply(kernel: ApplyContext<PluginConfig<typeof envRemoteSchema>>): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      if (config.env.name === 'remote' && kernel.config.env.remote === undefined) {
        throw new DrmasError('CONFIG_INVALID', 'env.name is remote but env.remote is not set', {
          key: 'env.remote',
          hint: "start a server (drmas serve --environments math --port 50051) and set env.remote: { urls: ['127.0.0.1:50051'] }",
        });
      }
    });
    kernel.hooks.shutdown.tap(PLUGIN_NAME, () => this.environment?.close());
  }
}

/** The plugin module's default export: `plugins: ['env-remote']`. */
export default function envRemotePlugin(): EnvRemotePlugin {
  return new EnvRemotePlugin();
}
