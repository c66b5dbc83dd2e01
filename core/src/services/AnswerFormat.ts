import { createToken } from '../di/Token.js';

/**
 * How answers of one kind are read from a response and compared: env-math's `math` (the last `\boxed{}`, equal as
 * math: `0.5` = `\frac{1}{2}`). Whoever judges or compares answers it does not define itself takes one by name: an
 * environment that judges answers (env-debate's `env.debate.answerFormat`), an orchestra that votes over them
 * (`orchestra.answerFormat`).
 */
export interface AnswerFormat {
  /** The final answer `text` gives, or undefined when it gives none. */
  extract(text: string): string | undefined;
  /** Whether `answer` is the same answer as `reference`; never throws. */
  equal(answer: string, reference: string): boolean;
}

export const AnswerFormat = createToken<AnswerFormat>('AnswerFormat', { label: 'answer format', named: true });
