import { DrmasError } from '../errors/DrmasError.js';
import type { BatchView, WorkerGroupBatch } from './BatchView.js';
import { makeTurn, type Trajectory, type Turn } from './Turn.js';

/** The id columns of every batch, one per field of a turn's key. */
export type IdName = 'group' | 'trajectory' | 'agent' | 'round' | 'workerGroup';
export const ID_NAMES: readonly IdName[] = Object.freeze(['group', 'trajectory', 'agent', 'round', 'workerGroup']);

/** Integer-coded ids: `codes[row]` indexes `names`, in order of first appearance. */
export interface IdColumn {
  readonly codes: Int32Array;
  readonly names: readonly string[];
}

/** Preference pairs over the batch's rows (DPO): `chosen[i]` is preferred to `rejected[i]`; a row is in one pair at most. */
export interface PreferencePairs {
  readonly chosen: Int32Array;
  readonly rejected: Int32Array;
}

/** The turn's key as ids: `round` as text. */
function keyOf(turn: Turn, name: IdName): string {
  switch (name) {
    case 'group':
      return turn.groupId;
    case 'trajectory':
      return turn.trajectoryId;
    case 'agent':
      return turn.agentId;
    case 'round':
      return String(turn.round);
    case 'workerGroup':
      return turn.workerGroupId;
  }
}

/** Integer codes for keys, in order of first appearance, with the key each code stands for. */
export function idColumn(keys: Iterable<string>): IdColumn {
  const seen = new Map<string, number>();
  const codes = Int32Array.from(keys, (key) => {
    let code = seen.get(key);
    if (code === undefined) {
      code = seen.size;
      seen.set(key, code);
    }
    return code;
  });
  return { codes, names: [...seen.keys()] };
}

/** A batch's id columns, one per `IdName`. */
export type BatchIds = Readonly<Record<IdName, IdColumn>> & {
  /** @deprecated since 0.2.0: `round` */
  readonly step: IdColumn;
};

/** Freezes `columns` with `step`, the name of the `round` column before 0.2.0, as a non-enumerable getter. */
function batchIds(columns: Record<IdName, IdColumn>): BatchIds {
  const round = columns.round;
  // defineProperty's type keeps its argument's type; the getter added here is what makes the columns BatchIds.
  return Object.freeze(Object.defineProperty(columns, 'step', { get: () => round, enumerable: false })) as BatchIds;
}

function encode(turns: readonly Turn[], name: IdName): IdColumn {
  return idColumn(turns.map((turn) => keyOf(turn, name)));
}

/** The temperature a turn is scored at: its sampling temperature, with greedy (0) and unset counting as 1. */
export function scoringTemperature(temperature: number | undefined): number {
  return temperature === undefined || temperature <= 0 ? 1 : temperature;
}

/**
 * A step's training data, packed once after the `reward` hook: one row per agent turn, in trajectory order, as
 * typed-array columns. Per-token columns are row-major `[rows * responseLength]`, responses right-padded. The
 * estimator fills `advantages` and `returns` (and `excludedRows` where it keeps rows out of the loss), the trainer
 * `oldLogProbs` and `refLogProbs`; worker groups, mini-batches and each estimator's rows are views (row indices)
 * over the same columns, never copies. Each column means one thing: what a loss reads besides the advantages has
 * a column of its own (`lossWeights`, `pairs`, `advantageFactors`).
 */
export class TrainingBatch {
  readonly rows: number;
  /** Width of the per-token columns: the longest response (at least 1). */
  readonly responseLength: number;
  /** The turn behind each row (text, parsed action and info, for logs; numbers are read from the columns). */
  readonly turns: readonly Turn[];
  /** The episodes the rows come from (outcomes, data sources); empty for batches packed from bare turns. */
  readonly trajectories: readonly Trajectory[];
  readonly ids: BatchIds;
  /** Prompt token ids of each row, unpadded (engines pad as their kernels prefer). */
  readonly promptIds: readonly Int32Array[];
  readonly responseLengths: Int32Array;
  /** Temperature each row was sampled at (greedy counts as 1): it is scored and trained at the same. */
  readonly temperatures: Float32Array;
  /** 1 where the turn's output parsed, 0 where it was malformed. */
  readonly valid: Uint8Array;
  /** 1 where generation was cut at maxNewTokens. */
  readonly truncated: Uint8Array;
  /** Each turn's scalar reward, as the `reward` hook left it. */
  readonly rewards: Float64Array;
  readonly responseIds: Int32Array;
  /** 1 on each row's response tokens, 0 on padding; as packed (rows kept out of the loss are `excludedRows`). */
  readonly responseMask: Float32Array;
  /** Log-prob of each sampled token under the rollout engine's policy at the row's temperature. */
  readonly rolloutLogProbs: Float32Array;
  /** Rewards placed on tokens: a turn's reward on its last token, or the turn's own `tokenRewards`. */
  readonly tokenRewards: Float64Array;
  /** The estimator's advantages, and only those. */
  readonly advantages: Float64Array;
  readonly returns: Float64Array;
  /**
   * Per row: 1 where the row is kept out of the loss, set by the estimator that decided it (rows of zero-variance
   * groups, with `excludeZeroStdGroups`); absent: every row trains. Losses see such a row's mask as 0
   * (`trainedColumns`, `lossTotals`, `rowsWithAdvantage`, `rowTrains`).
   */
  excludedRows?: Uint8Array;
  /**
   * Per token: a factor the policy loss multiplies the advantages by (HAPPO's M while a role trains); absent or 1:
   * the advantages as estimated.
   */
  advantageFactors?: Float64Array;
  /** The PPO ratio's denominator, from the trainer (scored rows) or the rollout. */
  oldLogProbs?: Float32Array;
  /** Log-probs under the frozen reference policy, for a KL term. */
  refLogProbs?: Float32Array;
  /** Critic values at every token. */
  values?: Float64Array;
  /** Per row: the reward of a greedy rollout of its prompt (ReMax). */
  baselineRewards?: Float64Array;
  /** Per row: the environment observation the turn acted on (GiGPO anchor states). */
  observations?: readonly string[];
  /** Per token: a loss's weight on the token (`drmas sft`'s demonstration weights, read by the NLL loss). */
  lossWeights?: Float32Array;
  /** The preference pairs a DPO loss compares (a preference batch's rows, chosen then rejected). */
  pairs?: PreferencePairs;

  private constructor(turns: readonly Turn[], trajectories: readonly Trajectory[]) {
    const rows = turns.length;
    let longest = 1;
    for (const turn of turns) longest = Math.max(longest, turn.responseIds.length);
    const R = longest;
    this.rows = rows;
    this.responseLength = R;
    this.turns = turns;
    this.trajectories = trajectories;
    this.ids = batchIds(Object.fromEntries(ID_NAMES.map((name) => [name, encode(turns, name)])) as Record<IdName, IdColumn>);
    this.promptIds = turns.map((turn) => Int32Array.from(turn.promptIds));
    this.responseLengths = Int32Array.from(turns, (turn) => turn.responseIds.length);
    this.temperatures = Float32Array.from(turns, (turn) => scoringTemperature(turn.temperature));
    this.valid = Uint8Array.from(turns, (turn) => (turn.valid ? 1 : 0));
    this.truncated = Uint8Array.from(turns, (turn) => (turn.finishReason === 'length' ? 1 : 0));
    this.rewards = Float64Array.from(turns, (turn) => turn.reward ?? 0);
    this.responseIds = new Int32Array(rows * R);
    this.responseMask = new Float32Array(rows * R);
    this.rolloutLogProbs = new Float32Array(rows * R);
    this.tokenRewards = new Float64Array(rows * R);
    this.advantages = new Float64Array(rows * R);
    this.returns = new Float64Array(rows * R);
    turns.forEach((turn, row) => {
      const offset = row * R;
      const length = turn.responseIds.length;
      if (turn.logProbs.length !== length) {
        throw new DrmasError(
          'INVALID_ARGUMENT',
          `turn ${row} (${turn.trajectoryId}, agent ${turn.agentId}) has ${length} response tokens but ${turn.logProbs.length} log-probs`,
          {
            hint: 'a rollout must record one sampling log-prob per response token',
          },
        );
      }
      this.responseIds.set(turn.responseIds, offset);
      this.responseMask.fill(1, offset, offset + length);
      this.rolloutLogProbs.set(turn.logProbs, offset);
      if (turn.tokenRewards) this.tokenRewards.set(turn.tokenRewards, offset);
      else this.tokenRewards[offset + Math.max(0, length - 1)] = turn.reward ?? 0;
    });
  }

  /** Packs the turns of `trajectories`, in order. */
  static fromTrajectories(trajectories: readonly Trajectory[]): TrainingBatch {
    return new TrainingBatch(
      trajectories.flatMap((t) => t.turns),
      trajectories,
    );
  }

  /** Packs bare turns (demonstrations, ad-hoc scoring): no trajectories behind them. */
  static fromTurns(turns: readonly Turn[]): TrainingBatch {
    return new TrainingBatch(turns, []);
  }

  /**
   * Rows of (prompt, response) token ids, for scoring or training outside a rollout; each row is its own
   * trajectory of one agent `agent` on worker group `workerGroup`.
   */
  static fromSequences(
    prompts: readonly ArrayLike<number>[],
    responses: readonly ArrayLike<number>[],
    options: { temperatures?: ArrayLike<number>; logProbs?: readonly ArrayLike<number>[]; agent?: string; workerGroup?: string } = {},
  ): TrainingBatch {
    if (responses.length !== prompts.length) {
      throw new DrmasError('INVALID_ARGUMENT', `got ${prompts.length} prompts but ${responses.length} responses`, {
        hint: 'give one response per prompt',
      });
    }
    if (options.temperatures && options.temperatures.length !== prompts.length) {
      throw new DrmasError('INVALID_ARGUMENT', `got ${prompts.length} prompts but ${options.temperatures.length} temperatures`, {
        hint: 'give one temperature per row',
      });
    }
    const agentId = options.agent ?? 'agent';
    const workerGroupId = options.workerGroup ?? 'policy';
    return TrainingBatch.fromTurns(
      prompts.map((prompt, row) => {
        const responseIds = Array.from(responses[row]!);
        return makeTurn({
          groupId: `row${row}`,
          trajectoryId: `row${row}`,
          agentId,
          round: 0,
          workerGroupId,
          index: 0,
          promptIds: Array.from(prompt),
          responseIds,
          logProbs: options.logProbs ? Array.from(options.logProbs[row]!) : responseIds.map(() => 0),
          temperature: options.temperatures?.[row],
          valid: true,
        });
      }),
    );
  }

  /** Every row. */
  all(): BatchView {
    return { batch: this, rows: Int32Array.from({ length: this.rows }, (_, r) => r) };
  }

  view(rows: ArrayLike<number>): BatchView {
    return { batch: this, rows: Int32Array.from(rows) };
  }

  /** One view per worker group (sorted by id), each holding only that group's rows. */
  workerGroups(): WorkerGroupBatch[] {
    const column = this.ids.workerGroup;
    const order = column.names.map((name, code) => ({ name, code })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return order.map(({ name, code }) => {
      const rows: number[] = [];
      const agents = new Set<string>();
      for (let r = 0; r < this.rows; r++) {
        if (column.codes[r] !== code) continue;
        rows.push(r);
        agents.add(this.ids.agent.names[this.ids.agent.codes[r]!]!);
      }
      return { batch: this, rows: Int32Array.from(rows), workerGroupId: name, agentIds: [...agents].sort() };
    });
  }
}
