import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readRunDir } from './readRunDir.js';
import { buildReportData, type ReportData } from './reportData.js';
import { reportHtml } from './reportHtml.js';

export interface RenderReportOptions {
  runDir: string;
  /** Where to write the page; default `<runDir>/report.html`. */
  outFile?: string;
  /** The time written into the report (tests pass a fixed one). */
  now?: Date;
}

export interface RenderedReport {
  file: string;
  data: ReportData;
  /** Lines skipped and files missing; also listed in the page. */
  notes: string[];
}

/** Reads a run directory and writes its self-contained `report.html`. */
export function renderReport(options: RenderReportOptions): RenderedReport {
  const runDir = path.resolve(options.runDir);
  const data = buildReportData(readRunDir(runDir), options.now);
  const file = path.resolve(options.outFile ?? path.join(runDir, 'report.html'));
  writeFileSync(file, reportHtml(data));
  return { file, data, notes: data.notes };
}
