import { WorkerGroups, type Kernel, type RunContext } from '@drmas/core';
import type { WorkerGroupsService } from '@drmas/plugin-trainer';
import { ServedModels } from './engine/ServedModels.js';
import type { MicroBatchOptions } from './engine/MicroBatcher.js';
import { GatewayServer } from './server/GatewayServer.js';

export interface GatewayOptions extends MicroBatchOptions {
  host: string;
  port: number;
  log: (message: string) => void;
}

/** Defaults of `drmas gateway`: loopback only, a 5 ms batching window, 32 rows per engine call. */
export const GATEWAY_DEFAULTS = { host: '127.0.0.1', port: 8000, windowMs: 5, maxBatch: 32 } as const;

/**
 * A gateway over a kernel's run: its worker groups' sampling engines loaded as a rollout worker loads them (no
 * trainer, no run directory), served over HTTP until `close`.
 */
export class Gateway {
  private constructor(
    private readonly groups: WorkerGroupsService,
    readonly server: GatewayServer,
    /** `http://host:port` (no `/v1`). */
    readonly url: string,
  ) {}

  static async open(kernel: Kernel, options: GatewayOptions): Promise<Gateway> {
    const run: RunContext = {
      config: kernel.config,
      container: kernel.container,
      runDir: kernel.cwd,
      signal: new AbortController().signal,
      log: options.log,
    };
    // The trainer plugin's service, through the role's token (the plugin may be another copy than this one imports).
    const groups = kernel.get(WorkerGroups) as unknown as WorkerGroupsService;
    await groups.create(run, { reference: false, samplingOnly: true });
    try {
      const server = new GatewayServer(new ServedModels(groups.all(), options), { host: options.host, port: options.port });
      const url = await server.start();
      return new Gateway(groups, server, url);
    } catch (error) {
      groups.dispose();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.server.stop();
    this.groups.dispose();
  }
}
