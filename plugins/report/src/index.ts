export { default, ReportPlugin, PLUGIN_NAME, type ReportPluginOptions } from './plugin/ReportPlugin.js';
export { reportSection, type ReportSettings } from './plugin/reportConfig.js';

export { renderReport, type RenderReportOptions, type RenderedReport } from './report/renderReport.js';
export { reportHtml, REPORT_DATA_ELEMENT_ID } from './report/reportHtml.js';
export { readRunDir, ROLLOUT_TAIL_BYTES, type RunFiles } from './report/readRunDir.js';
export {
  buildReportData,
  buildSeries,
  decodeValue,
  encodeValue,
  episodesOf,
  seriesPoints,
  MAX_EPISODES,
  type Episode,
  type EpisodeTurn,
  type ReportData,
  type RolloutBrowserData,
  type RunSummary,
  type Series,
  type SeriesValue,
} from './report/reportData.js';
export { parseJsonLines, parseLenientJson, type JsonRecord, type ParsedJsonLines } from './report/parseJsonLines.js';
export { planPanels, type PanelSection, type PlannedChart, type PlannedPanel, type PlannedSeries } from './report/chartPlan.js';
export { compareEvaluations, type EvaluationComparison, type EvaluationRow } from './report/evaluationComparison.js';
export { pageAssets, reportPageScript, type PageAssets } from './report/pageAssets.js';
export { escapeHtml, jsonForScript, scriptText } from './report/escapeHtml.js';

export { ProgressReporter, type ProgressMode, type ProgressReporterOptions, type ProgressStream } from './progress/ProgressReporter.js';
export {
  estimateEta,
  formatDuration,
  formatProgressBar,
  formatProgressLine,
  median,
  progressBar,
  type ProgressState,
} from './progress/formatProgress.js';
export {
  formatMetric,
  formatSummaryTable,
  formatTable,
  summarizeMetrics,
  type MetricRecord,
  type MetricTrend,
  type RunSummaryStats,
  type WorkerGroupSummary,
} from './progress/summaryTable.js';

export { reportCommand } from './cli/reportCommand.js';
