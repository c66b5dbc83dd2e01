export { default, MlflowPlugin, PLUGIN_NAME, MLFLOW_RUN_FILE } from './plugin/MlflowPlugin.js';
export { mlflowSection, type MlflowSettings } from './plugin/mlflowConfig.js';
export { configParams, mlflowName, mlflowValue } from './plugin/mlflowNames.js';
export {
  authorizationFromEnv,
  MlflowClient,
  MAX_METRICS_PER_BATCH,
  MAX_PARAMS_TAGS_PER_BATCH,
  MAX_PARAM_VALUE_LENGTH,
  OLD_MAX_PARAM_VALUE_LENGTH,
  type ExperimentChoice,
  type KeyValue,
  type MlflowClientOptions,
  type MlflowMetric,
  type ParamsOutcome,
  type RunStatus,
} from './client/MlflowClient.js';
