import { randomUUID } from 'node:crypto';

/** One call through the gateway, token in and token out: what training needs of it, never re-tokenized. */
export interface CapturedTurn {
  /** The completion's id (`chatcmpl-...`, `cmpl-...`): AReaL's interaction id, for `set_reward`. */
  id: string;
  /** The `model` the client named. */
  model: string;
  /** The `models.<id>` that sampled it. */
  modelId: string;
  /** The agent role (the `model` named one, or the agent header said so); absent when neither did. */
  agent?: string;
  endpoint: 'chat.completions' | 'completions';
  /** The exact ids the engine was given. */
  promptIds: number[];
  /** The ids the engine sampled, all of them (a stop string's tokens included). */
  responseIds: number[];
  /** The engine's sampling log-prob of each response id, at `temperature` (1 when greedy). */
  logProbs: number[];
  temperature: number;
  finishReason: 'stop' | 'length';
  /** The completion's text as the client got it (tool-call blocks included; special tokens and stop string out). */
  text: string;
  reward?: number;
}

export interface Session {
  id: string;
  /** The task the caller started the session for (AReaL's `task_id`). */
  taskId?: string;
  turns: CapturedTurn[];
  ended: boolean;
  /** When it was last started, called, rewarded or ended (`performance.now()`, ms). */
  lastUsed: number;
  /** Calls in flight: a session sampling a long completion is not idle. */
  busy: number;
}

/** How long a session nobody touches is kept by default: 30 minutes, far beyond an agent's pause between calls. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/** Why a session operation was refused, for the HTTP layer to answer (404 unknown, 409 ended, 400 bad input). */
export class SessionError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Capture sessions, AReaL's session API in shape: start one (per episode), send its calls with the session's id,
 * give rewards to its turns (by completion id, or the last turn), end it, then take its turns.
 */
export class Sessions {
  /** In order of last use (a touched session moves to the end), so the idle ones are at the front. */
  private readonly byId = new Map<string, Session>();
  /** Sessions freed for idling. */
  expired = 0;

  /**
   * `idleMs`: a session not touched for this long (started, called, rewarded, ended or exported) is freed, with its
   * turns: an abandoned episode does not hold memory until the gateway stops.
   */
  constructor(readonly idleMs: number = DEFAULT_SESSION_IDLE_MS) {}

  start(taskId?: string): Session {
    const now = this.sweep();
    const session: Session = { id: `sess-${randomUUID()}`, taskId, turns: [], ended: false, lastUsed: now, busy: 0 };
    this.byId.set(session.id, session);
    return session;
  }

  get(id: string): Session {
    const now = this.sweep();
    const session = this.byId.get(id);
    if (!session) {
      throw new SessionError(
        404,
        `no session "${id}" (never started, exported, or freed after ${formatIdle(this.idleMs)} idle): start one with POST /rl/start_session`,
        'session_id',
      );
    }
    session.lastUsed = now;
    this.byId.delete(id);
    this.byId.set(id, session);
    return session;
  }

  /** Frees the sessions idle for `idleMs` or more; answers the time now. */
  private sweep(): number {
    const now = performance.now();
    for (const [id, session] of this.byId) {
      if (session.busy > 0) continue;
      if (now - session.lastUsed < this.idleMs) break;
      this.byId.delete(id);
      this.expired++;
    }
    return now;
  }

  /**
   * The session a call belongs to, refused once it ended (its turns may already be in a batch); it stays held until
   * `release` (the call answered or failed).
   */
  open(id: string): Session {
    const session = this.get(id);
    if (session.ended) throw new SessionError(409, `session "${id}" has ended; start a new one for further calls`, 'session_id');
    session.busy++;
    return session;
  }

  /** A call `open` let in is over. */
  release(session: Session): void {
    session.busy--;
    session.lastUsed = performance.now();
  }

  record(id: string, turn: CapturedTurn): void {
    this.get(id).turns.push(turn);
  }

  /** Sets a turn's reward: the one with `interactionId`, or the latest turn when it is absent (AReaL's `set_reward`). */
  setReward(id: string, reward: number, interactionId?: string | null): CapturedTurn {
    const session = this.get(id);
    const turn = interactionId == null ? session.turns.at(-1) : session.turns.find((t) => t.id === interactionId);
    if (!turn) {
      throw interactionId == null
        ? new SessionError(400, `session "${id}" has no turn yet to reward`, 'interaction_id')
        : new SessionError(404, `session "${id}" has no turn "${interactionId}"`, 'interaction_id');
    }
    turn.reward = reward;
    return turn;
  }

  end(id: string): Session {
    const session = this.get(id);
    session.ended = true;
    return session;
  }

  /** Hands over an ended session's turns and forgets it. */
  take(id: string): Session {
    const session = this.get(id);
    if (!session.ended)
      throw new SessionError(409, `session "${id}" is still open: end it with POST /${id}/rl/end_session first`, 'session_id');
    this.byId.delete(id);
    return session;
  }

  /** Sessions held (idle ones are counted until the next call frees them). */
  get size(): number {
    return this.byId.size;
  }
}

function formatIdle(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}
