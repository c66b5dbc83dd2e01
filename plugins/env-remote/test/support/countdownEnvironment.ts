import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvAction, EnvTask, EnvTaskBatch, Environment, Episode } from '@drmas/core';

interface CountdownTask extends EnvTask {
  target: number;
}

class CountdownEpisode implements Episode {
  done = false;
  outcome = 0;
  roundScore?: number;
  guesses = 0;

  constructor(readonly task: CountdownTask) {}

  observation(): string {
    return `guesses so far: ${this.guesses}`;
  }

  variables(): Record<string, string> {
    return { target: String(this.task.target) };
  }

  metrics(): Record<string, number> {
    return { guesses: this.guesses };
  }
}

/**
 * A small multi-round environment for the server tests: task i asks for the number i; an episode ends when the
 * answer is right (outcome 1) and lasts up to `maxRounds` guesses. `stepDelayMs` makes a round slow, for deadlines.
 */
export class CountdownEnvironment implements Environment<CountdownTask> {
  readonly name = 'countdown';
  stepCalls = 0;

  constructor(
    readonly maxRounds = 3,
    private readonly stepDelayMs = 0,
  ) {}

  async init(): Promise<void> {}

  batch(cursor: number, count: number): EnvTaskBatch<CountdownTask> {
    const tasks = Array.from({ length: count }, (_, i) => ({ id: `t${cursor + i}`, dataSource: 'countdown', target: cursor + i }));
    return { tasks, nextCursor: cursor + count };
  }

  test(): CountdownTask[] {
    return [{ id: 'h0', dataSource: 'countdown', target: 100 }];
  }

  reset(task: CountdownTask): CountdownEpisode {
    return new CountdownEpisode(task);
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    this.stepCalls++;
    if (this.stepDelayMs > 0) await sleep(this.stepDelayMs);
    episodes.forEach((e, i) => {
      const episode = e as CountdownEpisode;
      episode.guesses++;
      episode.roundScore = actions[i]!.content === String(episode.task.target) ? 1 : 0;
      if (episode.roundScore === 1) {
        episode.done = true;
        episode.outcome = 1;
      }
    });
  }
}
