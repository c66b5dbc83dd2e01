import { AnswerFormat, Environment, QuestionSet, type Plugin, type RegisterContext } from '@drmas/core';
import { mathAnswerFormat } from '../answerEquivalence.js';
import { arithmeticQuestionSet } from '../ArithmeticTaskSource.js';
import { mathEnvKeys, type MathEnvSettingsInput } from '../environment/mathEnvConfig.js';
import { MathEnvironment } from '../environment/MathEnvironment.js';

export const PLUGIN_NAME = 'env-math';

/**
 * Provides the `math` Environment (`env.name: math`): synthetic arithmetic or a dataset file, scored on the final
 * `\boxed{}` answer; the `math` AnswerFormat (`\boxed{}`, equal as math) and the `math` QuestionSet (arithmetic with
 * answers), for whoever judges, votes over or debates math answers. Adds its keys to the `env` section; the orchestra
 * that runs it initializes it in `setup`.
 */
export class EnvMathPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: mathEnvKeys };
  readonly configPaths = ['env.file', 'env.testFile'];

  register(ctx: RegisterContext): void {
    ctx.provide(Environment, 'math', new MathEnvironment(() => ctx.config.env as MathEnvSettingsInput));
    ctx.provide(AnswerFormat, 'math', mathAnswerFormat);
    ctx.provide(QuestionSet, 'math', arithmeticQuestionSet);
  }
}

/** The plugin module's default export: `plugins: ['env-math']`. */
export default function envMathPlugin(): EnvMathPlugin {
  return new EnvMathPlugin();
}
