/**
 * onnxruntime sessions shared by the engines and trainers of one run whose graphs are the same: a graph that takes its
 * weights as inputs depends on the architecture and options only, so a run's models of one architecture (one per
 * agent, from one checkpoint) can run one session per graph, and with it one CPU arena, which keeps the largest
 * activations a session has held. Measured on M-ASK with a model for each of its five agents: a training arena per
 * model took a run past 12 GB (about 1.7 GB each); a sampling arena per model took its final evaluation to 18.5 GB
 * (`drmas eval` of 16 tasks: 8.2 GB, against 3.5 GB shared).
 *
 * Sessions are found by a scope (the graph's kind, or the training loss) and a key naming the rest. Each engine or
 * trainer retains the pool on its first session and releases it when done; the last one to let go releases the
 * sessions (built again if asked for after).
 */
export class SharedSessions<S> {
  private readonly byScope = new Map<unknown, Map<string, Promise<S>>>();
  private users = 0;

  constructor(private readonly releaseSession: (session: S) => Promise<void>) {}

  retain(): void {
    this.users++;
  }

  async release(): Promise<void> {
    if (--this.users > 0) return;
    const pending = [...this.byScope.values()].flatMap((byKey) => [...byKey.values()]);
    this.byScope.clear();
    for (const p of pending) await this.releaseSession(await p);
  }

  /** The session of `scope` and `key`, built once by `build`. */
  get(scope: unknown, key: string, build: () => Promise<S>): Promise<S> {
    let byKey = this.byScope.get(scope);
    if (!byKey) this.byScope.set(scope, (byKey = new Map<string, Promise<S>>()));
    let pending = byKey.get(key);
    if (!pending) byKey.set(key, (pending = build()));
    return pending;
  }

  /** Sessions built so far. */
  get size(): number {
    return [...this.byScope.values()].reduce((n, byKey) => n + byKey.size, 0);
  }
}
