export {
  SearchEnvError,
  SearchInputError,
  DataFileError,
  RetrieverRequestError,
  RetrieverResponseError,
  RetrieverUnavailableError,
  type RetrieveAttemptFailure,
} from './errors.js';
export type { SearchQuestion, SearchQuestionStep } from './corpus/SearchQuestion.js';
export {
  generateKnowledgeBase,
  KB_SINGLE_HOP,
  KB_TWO_HOP,
  type KnowledgeBase,
  type KnowledgeBaseDocument,
  type KnowledgeBaseFact,
  type KnowledgeBaseOptions,
  type EntityKind,
} from './corpus/KnowledgeBase.js';
export { SearchTaskSource, type SearchTaskSourceOptions, type SearchTaskBatch } from './corpus/SearchTaskSource.js';
export {
  loadQaJsonl,
  loadQaFile,
  loadCorpusJsonl,
  parseQaRecord,
  parseCorpusRecord,
  formatCorpusJsonl,
  type QaJsonlOptions,
} from './corpus/jsonlLoaders.js';
export { splitContents, joinContents, type Retriever, type SearchDocument, type SearchHit } from './retrieval/Retriever.js';
export { Tokenizer, ENGLISH_STOPWORDS, type TokenizerOptions } from './retrieval/Tokenizer.js';
export { Bm25Index, type Bm25Options, type Bm25Hit } from './retrieval/Bm25Index.js';
export { Bm25Retriever } from './retrieval/Bm25Retriever.js';
export {
  parseRetrieveRequest,
  formatRetrieveResponse,
  serializeRetrieveResponse,
  readRetrieveResponse,
  RetrieveRequestInvalid,
  RetrieveResponseTooLarge,
  type RetrieveRequest,
  type RetrieveResponse,
  type RetrieveResponseItem,
  type RetrieveLimits,
} from './http/retrieveProtocol.js';
export {
  startRetrieverServer,
  RETRIEVER_SERVER_LIMITS,
  RETRIEVER_LIMIT_CEILINGS,
  type RetrieverServerLimits,
  type RetrieverServerOptions,
  type RunningRetrieverServer,
} from './http/retrieverServer.js';
export { RetrieverClient, type RetrieverClientOptions } from './http/RetrieverClient.js';
export { scoreSearchAnswer, extractLastAnswer, answerInText, type SearchAnswerScore } from './answerMatch.js';
export {
  SearchEpisode,
  applySearches,
  formatInformation,
  parseSearchAction,
  parseVerifierDecision,
  INVALID_ACTION_FEEDBACK,
  type SearchAction,
  type SearchEpisodeOptions,
  type SearchHistoryEntry,
} from './SearchEpisode.js';
export { DemonstrationBuilder, type DemonstrationTurn, type SearchDemonstration, type SearchAgentName } from './SearchDemonstration.js';
export { retriever as retrieverCommand } from './cli/retrieverCommand.js';

export { SearchEnvironment, SearchEnvEpisode, searchTogether, type EpisodeSearch } from './environment/SearchEnvironment.js';
export { searchTool, type SearchToolSettings } from './tool/searchTool.js';
export { searchEnvKeys, searchEnvSettings, type SearchEnvSettings, type SearchEnvSettingsInput } from './environment/searchEnvConfig.js';
export { EnvSearchPlugin, PLUGIN_NAME } from './plugin/EnvSearchPlugin.js';
export { default } from './plugin/EnvSearchPlugin.js';
