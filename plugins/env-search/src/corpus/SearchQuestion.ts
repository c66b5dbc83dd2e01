/** One retrieval step of the ideal solution of a knowledge-base question (used to build demonstrations). */
export interface SearchQuestionStep {
  /** The query an ideal Search agent would issue, e.g. `Varnok Telli born`. */
  query: string;
  /** The document that answers this step. */
  docId: string;
  /** A short reason, e.g. `need birthplace`. */
  need: string;
  /** What this step finds (the bridge entity, or the final answer). */
  finds: string;
}

export interface SearchQuestion {
  id: string;
  question: string;
  /** Golden answers; a prediction matching any of them (after normalisation) is correct. */
  answers: string[];
  /** Documents that together contain the answer; empty for external data that lacks them. */
  supportingDocIds: string[];
  /** Documents to chain to reach the answer (1 or 2 for the knowledge base); absent when unknown. */
  hops?: number;
  /** Where the question comes from, e.g. `kb-1hop`, `kb-2hop`, `nq`. */
  dataSource: string;
  /** The ideal retrieval chain, for questions generated from the knowledge base. */
  steps?: SearchQuestionStep[];
}
