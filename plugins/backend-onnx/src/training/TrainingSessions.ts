import type { LossFunction } from '@drmas/core';

/**
 * Training sessions by what their graph depends on: the loss, and a key naming the rest (architecture, loss options,
 * provider, session options). A training graph takes its weights as inputs, so the trainers of one run's models of
 * one architecture can share a session, and with it onnxruntime's CPU arena, which keeps the largest activations a
 * session has held (about 1.7 GB for an M-ASK worker group: five models, one per agent, each with its own arena took a
 * run past 12 GB and out of a 24 GiB machine with two runs).
 */
export class TrainingSessions<S extends { session: { release(): Promise<void> } }> {
  private readonly byLoss = new Map<LossFunction, Map<string, Promise<S>>>();
  /** Trainers using the sessions: the last one to let go releases them. */
  private users = 0;

  retain(): void {
    this.users++;
  }

  /** One trainer lets go; when none uses the sessions any more they are released (and rebuilt if asked for again). */
  async release(): Promise<void> {
    if (--this.users > 0) return;
    const pending = [...this.byLoss.values()].flatMap((byKey) => [...byKey.values()]);
    this.byLoss.clear();
    for (const p of pending) await (await p).session.release();
  }

  /** The session of `loss` and `key`, built once by `build`. */
  get(loss: LossFunction, key: string, build: () => Promise<S>): Promise<S> {
    let byKey = this.byLoss.get(loss);
    if (!byKey) this.byLoss.set(loss, (byKey = new Map<string, Promise<S>>()));
    let pending = byKey.get(key);
    if (!pending) byKey.set(key, (pending = build()));
    return pending;
  }

  /** Sessions built so far. */
  get size(): number {
    return [...this.byLoss.values()].reduce((n, byKey) => n + byKey.size, 0);
  }
}
