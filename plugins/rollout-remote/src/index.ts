export { default, RemoteRolloutPlugin, remoteRolloutFactory, PLUGIN_NAME, WEIGHTS_FOLDER } from './RemoteRolloutPlugin.js';
export { RemoteEngine, type RemoteEngineOptions, type RemoteEngineStats } from './RemoteEngine.js';
export { ServerClient, type ServerClientOptions, type ServerClientStats } from './ServerClient.js';
export { DIALECTS, sglangDialect, vllmDialect, type RemoteDialect, type RowSample, type RowSampling } from './dialects.js';
export { remoteRolloutSchema, type RemoteRolloutSettings } from './remoteRolloutConfig.js';
