import type { HookName, InterceptableHook, KernelHooks } from './KernelHooks.js';

/** A tap as the kernel records it: the tap's name (a plugin's, or `<plugin>:<part>`), how it was tapped, its stage. */
export interface TapRecord {
  readonly name: string;
  readonly type: 'sync' | 'async' | 'promise';
  readonly stage: number;
}

interface Recorded extends TapRecord {
  readonly before: ReadonlySet<string> | undefined;
}

/**
 * Where `tap` goes among `taps`, as tapable 2's `Hook._insert` places it: after every tap of a lower or equal stage,
 * except that a tap naming others in `before` goes ahead of the earliest of them.
 */
function insertionIndex(taps: readonly Recorded[], tap: Recorded): number {
  const before = tap.before && new Set(tap.before);
  let i = taps.length;
  while (i > 0) {
    const other = taps[i - 1]!;
    if (before?.has(other.name)) {
      before.delete(other.name);
      i--;
      continue;
    }
    if ((before && before.size > 0) || other.stage > tap.stage) {
      i--;
      continue;
    }
    break;
  }
  return i;
}

/**
 * The taps of every kernel hook in the order the hook calls them, recorded as they are added through tapable's public
 * `register` interceptor (which also sees taps added before it was installed), so nothing reads tapable's own tap list.
 */
export class TapLedger {
  private readonly taps = new Map<HookName, Recorded[]>();

  install(hooks: KernelHooks): void {
    for (const name of Object.keys(hooks) as HookName[]) {
      const list: Recorded[] = [];
      this.taps.set(name, list);
      const hook: InterceptableHook = hooks[name];
      hook.intercept({
        register: (tap) => {
          // tapable takes one name or a list (its typings say only a name).
          const named: string | string[] | undefined = tap.before;
          const before = named === undefined ? undefined : new Set(typeof named === 'string' ? [named] : named);
          const recorded: Recorded = { name: tap.name, type: tap.type, stage: tap.stage ?? 0, before };
          list.splice(insertionIndex(list, recorded), 0, recorded);
          return tap;
        },
      });
    }
  }

  /** The taps of `hook`, in call order. */
  of(hook: HookName): TapRecord[] {
    return (this.taps.get(hook) ?? []).map(({ name, type, stage }) => ({ name, type, stage }));
  }
}
