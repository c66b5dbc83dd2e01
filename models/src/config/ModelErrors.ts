/** A `config.json` that cannot describe a supported decoder. Names the file and key at fault. */
export class ModelConfigError extends Error {
  readonly file?: string;
  readonly key?: string;

  constructor(message: string, details: { file?: string; key?: string; hint?: string } = {}) {
    const where = [details.file, details.key].filter(Boolean).join(': ');
    super(`${where ? `${where}: ` : ''}${message}${details.hint ? ` (${details.hint})` : ''}`);
    this.name = 'ModelConfigError';
    this.file = details.file;
    this.key = details.key;
  }
}

/** A weight tensor that is missing, or present with the wrong shape. Names the tensor and the shape expected. */
export class ModelWeightError extends Error {
  readonly tensor: string;
  readonly expectedShape: number[];

  constructor(tensor: string, expectedShape: number[], problem: string) {
    super(
      `weight '${tensor}' ${problem}; expected shape [${expectedShape.join(', ')}] ` +
        '(check that the checkpoint matches its config.json)',
    );
    this.name = 'ModelWeightError';
    this.tensor = tensor;
    this.expectedShape = expectedShape;
  }
}
