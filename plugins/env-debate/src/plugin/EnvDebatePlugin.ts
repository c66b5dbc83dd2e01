import { AnswerFormat, Environment, QuestionSet, type ApplyContext, type Plugin, type RegisterContext } from '@drmas/core';
import { debateEnvKeys, debateSection } from '../environment/debateEnvConfig.js';
import { DebateEnvironment } from '../environment/DebateEnvironment.js';
import { motionQuestionSet } from '../tasks/debateQuestions.js';

export const PLUGIN_NAME = 'env-debate';

/**
 * Provides the `debate` Environment (`env.name: debate`): debates on the questions of a QuestionSet (env-math's
 * `math`, or the `motions` this plugin provides) or a dataset, judged from the `debate` orchestra's transcript, answers
 * read by an AnswerFormat (env-math's `math`). Adds `env.debate` to the `env` section.
 */
export class EnvDebatePlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { env: debateEnvKeys };
  readonly configPaths = ['env.debate.file', 'env.debate.testFile'];
  private environment?: DebateEnvironment;

  register(ctx: RegisterContext): void {
    this.environment = new DebateEnvironment(() => ctx.config.env);
    ctx.provide(Environment, 'debate', this.environment);
    ctx.provide(QuestionSet, 'motions', motionQuestionSet);
  }

  apply(kernel: ApplyContext): void {
    this.environment?.lookUpIn(kernel);
    // A misspelt or missing question set or answer format stops the run before setup, with the registered names.
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      if (config.env.name !== 'debate') return;
      const debate = debateSection.parse(config.env.debate ?? {});
      kernel.getNamed(AnswerFormat, debate.answerFormat, 'env.debate.answerFormat');
      if (!debate.file) kernel.getNamed(QuestionSet, debate.tasks, 'env.debate.tasks');
    });
  }
}

/** The plugin module's default export: `plugins: ['env-debate']`. */
export default function envDebatePlugin(): EnvDebatePlugin {
  return new EnvDebatePlugin();
}
