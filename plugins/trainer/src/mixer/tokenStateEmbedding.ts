import { SeededRng } from '@drmas/core';

/**
 * A state's embedding for QMIX's hypernetworks: the mean over the state's tokens of a fixed random N(0, 1) vector per
 * token id (a bag of tokens under a random projection, drawn from `seed` and the id, so a resumed run embeds alike).
 * Engine-independent and free of a forward pass; it stands in for the mean-pooled hidden state of the policy, which no
 * engine exposes yet.
 */
export class TokenStateEmbedding {
  private readonly vectors = new Map<number, Float64Array>();

  constructor(
    readonly size: number,
    private readonly seed: number,
  ) {}

  private vectorOf(token: number): Float64Array {
    let vector = this.vectors.get(token);
    if (!vector) {
      const rng = new SeededRng(this.seed).fork(`token/${token}`);
      vector = Float64Array.from({ length: this.size }, () => rng.normal());
      this.vectors.set(token, vector);
    }
    return vector;
  }

  /** The mean of the tokens' vectors (zeros for no tokens). */
  embed(tokens: ArrayLike<number>): Float64Array {
    const state = new Float64Array(this.size);
    for (let i = 0; i < tokens.length; i++) {
      const vector = this.vectorOf(tokens[i]!);
      for (let d = 0; d < this.size; d++) state[d] = state[d]! + vector[d]! / tokens.length;
    }
    return state;
  }
}
