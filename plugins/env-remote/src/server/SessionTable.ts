import type { Environment, Episode } from '@drmas/core';
import type { EpisodeStateMessage } from '../protocol/environmentProtocol.js';

/** One open episode on the server. */
export interface Session {
  readonly id: string;
  readonly environment: string;
  readonly env: Environment;
  readonly episode: Episode;
  /** The task's JSON, to tell a retried create (same task) from a clashing id. */
  readonly taskJson: string;
  rounds: number;
  /** The state after the last round, answered again to a retry of that round. */
  last: EpisodeStateMessage;
  lastUsed: number;
  /** The step being applied, which a retry of it waits for rather than applying it a second time. */
  pending?: Promise<void>;
}

/** What an episode looks like now, as the wire carries it. */
export function episodeState(session: Pick<Session, 'id' | 'episode' | 'rounds'>): EpisodeStateMessage {
  const { episode } = session;
  return {
    sessionId: session.id,
    error: '',
    errorCode: '',
    observation: episode.observation(),
    variables: episode.variables(),
    done: episode.done,
    outcome: episode.outcome,
    ...(episode.roundScore === undefined ? {} : { stepScore: episode.roundScore }),
    metrics: episode.metrics(),
    stepsTaken: session.rounds,
  };
}

/**
 * The server's open sessions, with the idle timeout: a session no call touched for `idleTimeoutMs` is dropped by a
 * sweep (a client that crashed or abandoned its episodes does not hold memory for ever).
 */
export class SessionTable {
  private readonly sessions = new Map<string, Session>();
  private readonly sweep: NodeJS.Timeout;
  created = 0;
  expired = 0;

  constructor(
    readonly idleTimeoutMs: number,
    readonly maxSessions: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweep = setInterval(() => this.expire(), Math.max(10, Math.min(1000, Math.floor(idleTimeoutMs / 4))));
    this.sweep.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): Session | undefined {
    const session = this.sessions.get(id);
    if (session) session.lastUsed = this.now();
    return session;
  }

  add(session: Omit<Session, 'lastUsed' | 'rounds' | 'last'>): Session {
    const entry: Session = { ...session, rounds: 0, last: episodeState({ ...session, rounds: 0 }), lastUsed: this.now() };
    this.sessions.set(session.id, entry);
    this.created++;
    return entry;
  }

  delete(id: string): boolean {
    return this.sessions.delete(id);
  }

  /** Drops the sessions idle for longer than the timeout; how many. */
  expire(): number {
    const cutoff = this.now() - this.idleTimeoutMs;
    let dropped = 0;
    for (const [id, session] of this.sessions) {
      if (session.lastUsed < cutoff && !session.pending) {
        this.sessions.delete(id);
        dropped++;
      }
    }
    this.expired += dropped;
    return dropped;
  }

  close(): void {
    clearInterval(this.sweep);
    this.sessions.clear();
  }
}
