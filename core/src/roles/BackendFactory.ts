import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { ValueModel } from '../compute/ValueModel.js';
import type { RunContext } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';

/** Creates policy backends (one per worker group); chosen by name with `models.<id>.backend`. */
export interface BackendFactory {
  readonly name: string;
  /** Human-readable description of the runtime this factory would use, for `drmas info`. */
  describe?(): string;
  /** Rank among the engines `models.<id>.rollout: auto` may pick, higher first; absent: never picked by `auto`. */
  readonly priority?: number;
  /**
   * Why this factory cannot create a backend here (a package not installed, a library that does not load), or
   * undefined when it can. Initialises what it checks on the first call only and answers every call alike.
   */
  probe?(): Promise<string | undefined>;
  /**
   * The most memory a model with these settings can use on this backend (tfjs on wasm: 4 GiB), which caps the
   * default `trainer.memoryBudget`; undefined: only the machine's memory limits it.
   */
  memoryLimit?(settings: Record<string, unknown>): { bytes: number; reason: string } | undefined;
  create(options: { modelId: string; settings: Record<string, unknown>; run: RunContext }): Promise<PolicyBackend>;
  /**
   * Creates a critic (`critic` section): a decoder from `settings.model` with a zero-initialized scalar head, or, with
   * `shareTrunk`, a head on that policy's own trunk (which the value loss does not train). Absent: this engine has no
   * critics, and a config asking for one is refused.
   */
  createCritic?(options: {
    criticId: string;
    settings: Record<string, unknown>;
    run: RunContext;
    shareTrunk?: PolicyBackend;
  }): Promise<ValueModel>;
}
export const BackendFactory = createToken<BackendFactory>('BackendFactory', {
  label: 'backend',
  configKey: 'models.<id>.backend',
  named: true,
});
