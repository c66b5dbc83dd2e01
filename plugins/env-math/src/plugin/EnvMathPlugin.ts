import { AnswerFormat, Environment, QuestionSet, type Plugin, type PluginConfig, type RegisterContext } from '@drmas/core';
import { mathAnswerFormat } from '../answerEquivalence.js';
import { arithmeticQuestionSet } from '../ArithmeticTaskSource.js';
import { mathEnvKeys } from '../environment/mathEnvConfig.js';
import { MathEnvironment } from '../environment/MathEnvironment.js';

const envMathSchema = { env: mathEnvKeys };

export const PLUGIN_NAME = 'env-math';

/**
 * Provides the `math` Environment (`env.name: math`): synthetic arithmetic or a dataset file, scored on the final
 * `\boxed{}` answer; the `math` AnswerFormat (`\boxed{}`, equal as math) and the `math` QuestionSet (arithmetic with
 * answers), for whoever judges, votes over or debates math answers. Adds its keys to the `env` section; the orchestra
 * that runs it initializes it in `setup`.
 */
export class EnvMathPlugin implements Plugin<unknown, typeof envMathSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = envMathSchema;
  readonly configPaths = ['env.file', 'env.testFile'];

  register(ctx: RegisterContext<PluginConfig<typeof envMathSchema>>): void {
    ctx.provide(Environment, 'math', new MathEnvironment(() => ctx.config.env));
    ctx.provide(AnswerFormat, 'math', mathAnswerFormat);
    ctx.provide(QuestionSet, 'math', arithmeticQuestionSet);
  }
}

/** The plugin module's default export: `plugins: ['env-math']`. */
export default function envMathPlugin(): EnvMathPlugin {
  return new EnvMathPlugin();
}
