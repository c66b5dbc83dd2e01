import {
  BackendFactory,
  DrmasError,
  type GenerateRequest,
  type GenerateResult,
  type PolicyBackend,
  type ScoreResult,
  type TextCodec,
  type UpdateResult,
  type WeightTensor,
} from '@drmas/core';

/** Answers a prompt (as the agent sends it) with the text a good agent would write. */
export type TeacherPolicy = (prompt: string) => string;

/**
 * A rollout engine that answers from a `TeacherPolicy` instead of a model: running the real orchestra on it
 * records turns whose prompts are exactly what the agents send at training time, and whose responses are the
 * teacher's, i.e. demonstrations for supervised warm-up. It samples nothing and cannot train.
 */
export class TeacherBackend implements PolicyBackend {
  readonly name = 'teacher';
  readonly runtime = 'teacher policy (no model)';

  get vocabSize(): number {
    return this.tokenizer.vocabSize;
  }

  constructor(
    readonly tokenizer: TextCodec,
    private readonly policy: TeacherPolicy,
  ) {}

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const eos = this.tokenizer.eosTokenId;
    const tokenIds = request.prompts.map((prompt) => {
      const ids = this.tokenizer.encode(this.policy(this.tokenizer.decode(prompt)), { addSpecialTokens: false });
      return eos === undefined ? ids : [...ids, eos];
    });
    return { tokenIds, logProbs: tokenIds.map((ids) => ids.map(() => 0)), finishReasons: tokenIds.map(() => 'stop' as const) };
  }

  async score(): Promise<ScoreResult> {
    return this.refuse('score');
  }

  async update(): Promise<UpdateResult> {
    return this.refuse('update');
  }

  /** None: the teacher has no parameters (it cannot train). */
  parameterNames(): string[] {
    return [];
  }

  async save(): Promise<void> {
    this.refuse('save');
  }

  async load(): Promise<void> {
    this.refuse('load');
  }

  async exportWeights(): Promise<Map<string, WeightTensor>> {
    return this.refuse('exportWeights');
  }

  async syncWeights(): Promise<void> {}

  dispose(): void {}

  private refuse(what: string): never {
    throw new DrmasError('INVALID_ARGUMENT', `the teacher backend only writes demonstrations; it cannot ${what}`, {
      key: 'models.<id>.backend',
      hint: 'use backend: tfjs to train',
    });
  }
}

/** A BackendFactory named `teacher` whose engines answer with `policy`, encoding with `codec`. */
export function teacherBackendFactory(codec: TextCodec, policy: TeacherPolicy): BackendFactory {
  return {
    name: 'teacher',
    capabilities: ['sample'],
    describe: () => 'teacher policy (demonstrations)',
    create: async () => new TeacherBackend(codec, policy),
  };
}
