export { default, TensorBoardPlugin, PLUGIN_NAME, HISTOGRAM_SUFFIX } from './plugin/TensorBoardPlugin.js';
export { tensorboardSection, type TensorBoardSettings } from './plugin/tensorboardConfig.js';
export { rolloutMarkdown } from './plugin/rolloutText.js';
export { EventFileWriter } from './events/EventFileWriter.js';
export { histogramValue, scalarValue, textValue } from './events/summaries.js';
export { maskedCrc32c, tfRecord } from './events/tfRecord.js';
export type { EventValue, HistogramValue, SummaryValue } from './events/eventSchema.js';
