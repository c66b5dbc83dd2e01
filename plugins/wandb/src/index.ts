export {
  default,
  EXIT_CODES,
  newRunId,
  PLUGIN_NAME,
  resolveWandb,
  WANDB_RUN_FILE,
  WANDB_TIMING,
  WandbPlugin,
  wandbConfigJson,
  type ResolvedWandb,
  type WandbTiming,
} from './plugin/WandbPlugin.js';
export { WANDB_MODES, wandbSection, type WandbMode, type WandbSettings } from './plugin/wandbConfig.js';
export { HISTORY_FILE, HistoryStream, MAX_LINES_PER_REQUEST, SUMMARY_FILE, type StreamTiming } from './client/HistoryStream.js';
export {
  DEFAULT_BASE_URL,
  historyLine,
  parseHistoryLine,
  RUN_RESUME_STATUS_QUERY,
  UPSERT_BUCKET_MUTATION,
  VIEWER_QUERY,
  WandbClient,
  type FileStreamRequest,
  type Patience,
  type ResumeStatus,
  type RunPath,
  type UpsertRunInput,
  type WandbClientOptions,
} from './client/WandbClient.js';
