import { DrmasError } from '../errors/DrmasError.js';
import { FULL_DISK_REASONS } from '../run/outputDirectory.js';
import type { HookName, InterceptableHook, KernelHooks, RegisteredTap } from './KernelHooks.js';

const BUILTIN_TAP_PREFIX = 'drmas:';
/** Hooks that check the config before anything runs. */
const CONFIG_HOOKS: ReadonlySet<HookName> = new Set(['configure', 'validate']);

/** Marks an error already attributed to a tap, so a hook called from inside another tap does not wrap it twice. */
const ATTRIBUTED = Symbol.for('@drmas/core:attributedToTap');

/** Where the plugin behind a tap was listed, for messages: its config key, the file that listed it, its module. */
export interface TapOwner {
  key: string;
  listedIn: string;
  resolvedFrom: string;
}

export interface TapFailure {
  tap: string;
  /** The plugin behind the tap, when one of the kernel's plugins has the tap's name (or its part before `:`). */
  owner?: TapOwner;
  hook: HookName;
  /** The training step in progress (0: the evaluation before the first step); undefined outside the step loop. */
  step: number | undefined;
}

function isAttributed(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [ATTRIBUTED]?: boolean })[ATTRIBUTED] === true;
}

/**
 * The error a tap threw, as the user should see it: which plugin (the tap's name), in which hook, at which step.
 * A DrmasError keeps its code, key, file and hint; anything else becomes PLUGIN_FAILED with the original as `cause`.
 */
export function attributeTapError(error: unknown, failure: TapFailure, locate?: (key: string) => string | undefined): DrmasError {
  if (isAttributed(error)) return error as DrmasError;
  const where = `plugin ${failure.tap} failed in hook ${failure.hook}${failure.step === undefined ? '' : ` at step ${failure.step}`}`;
  let wrapped: DrmasError;
  if (DrmasError.is(error)) {
    // A DrmasError says what the user set wrong; the plugin and hook that found it follow. The kernel's own taps
    // (`drmas:*`) need no such note, nor does a config check that names its key: the key says what to change.
    const context = `[plugin ${failure.tap}, hook ${failure.hook}${failure.step === undefined ? '' : `, step ${failure.step}`}]`;
    const configCheck = CONFIG_HOOKS.has(failure.hook) && error.key !== undefined;
    const message = failure.tap.startsWith(BUILTIN_TAP_PREFIX) || configCheck ? error.message : `${error.message} ${context}`;
    wrapped = new DrmasError(error.code, message, {
      key: error.key,
      file: error.file ?? (error.key ? locate?.(error.key) : undefined),
      hint: error.hint,
      cause: error,
    });
  } else if (FULL_DISK_REASONS[(error as NodeJS.ErrnoException)?.code ?? ''] !== undefined) {
    // The machine's fault, not the plugin's: whatever it was writing, the disk has no room.
    const system = error as NodeJS.ErrnoException;
    wrapped = new DrmasError('OUTPUT_UNWRITABLE', `${where}: ${FULL_DISK_REASONS[system.code!]} (${system.message})`, {
      cause: error,
      key: 'trainer.outputDir',
      file: system.path,
      hint: 'free space on the disk of the run directory, or put runs on a disk with room (trainer.outputDir, or --run-dir); what was written before stays',
    });
  } else {
    const message = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
    const owner = failure.owner;
    wrapped = new DrmasError('PLUGIN_FAILED', `${where}: ${message}`, {
      cause: error,
      key: owner?.key,
      file: owner?.listedIn,
      hint: `a bug in the plugin${owner ? ` (from ${owner.resolvedFrom})` : ''} or a setting it does not check; run with --verbose for the stack trace`,
    });
  }
  Object.defineProperty(wrapped, ATTRIBUTED, { value: true });
  return wrapped;
}

/**
 * Wraps every tap of the kernel's hooks (tapable's `register` interceptor, which also sees taps added later) so an
 * error thrown in a tap names the plugin, the hook and the step, instead of surfacing as an anonymous exception.
 */
export class PluginErrorInterceptor {
  constructor(
    private readonly stepOf: () => number | undefined,
    private readonly locate?: (key: string) => string | undefined,
    private readonly ownerOf?: (tap: string) => TapOwner | undefined,
  ) {}

  install(hooks: KernelHooks): void {
    for (const hook of Object.keys(hooks) as HookName[]) {
      const intercepted: InterceptableHook = hooks[hook];
      intercepted.intercept({ register: (tap) => ({ ...tap, fn: this.wrap(hook, tap) }) });
    }
  }

  private wrap(hook: HookName, tap: RegisteredTap): (...args: unknown[]) => unknown {
    const { name, type } = tap;
    const fn = tap.fn as (...args: unknown[]) => unknown;
    const fail = (error: unknown) =>
      attributeTapError(error, { tap: name, hook, step: this.stepOf(), owner: this.ownerOf?.(name) }, this.locate);
    if (type === 'promise') {
      return (...args) => {
        let result: unknown;
        try {
          result = fn(...args);
        } catch (error) {
          return Promise.reject(fail(error));
        }
        // tapable itself reports a tapPromise tap that returns no promise; leave that check to it.
        if (!result || typeof (result as Promise<unknown>).then !== 'function') return result;
        return (result as Promise<unknown>).then(undefined, (error: unknown) => Promise.reject(fail(error)));
      };
    }
    if (type === 'async') {
      return (...args) => {
        const callback = args.pop() as (error?: unknown, result?: unknown) => void;
        try {
          return fn(...args, (error: unknown, result: unknown) => (error ? callback(fail(error)) : callback(error, result)));
        } catch (error) {
          throw fail(error);
        }
      };
    }
    return (...args) => {
      try {
        return fn(...args);
      } catch (error) {
        throw fail(error);
      }
    };
  }
}
