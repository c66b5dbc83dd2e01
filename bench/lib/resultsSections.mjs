// Sections of bench/RESULTS.md written by other scripts than bench/run.mjs: each lies between
// `<!-- section: name -->` and `<!-- end section: name -->` (run.mjs keeps such blocks when it rewrites the file),
// a part of it that a script rewrites between `<!-- section: name/part -->` and `<!-- end section: name/part -->`,
// the rest written by hand.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR } from './benchOptions.mjs';

export const ONNX_TRAINING_SECTION = 'onnx-training';
export const MAIN_JOB_SECTION = 'main-job';
export const MAIN_JOB_SPEED_SECTION = 'main-job-speed';
export const MEMORY_PATTERN_SECTION = 'memory-pattern';

const open = (name) => `<!-- section: ${name} -->`;
const close = (name) => `<!-- end section: ${name} -->`;

function block(text, name) {
  const start = text.indexOf(open(name));
  const end = text.indexOf(close(name));
  return start >= 0 && end > start ? { start, end: end + close(name).length } : undefined;
}

/**
 * `text` with the part `part` of section `name` replaced by `content`; an absent section is appended under
 * `heading`.
 */
export function replaceSection(text, name, part, content, heading) {
  const partName = `${name}/${part}`;
  if (!block(text, name)) {
    text = `${text.trimEnd()}\n\n${open(name)}\n${heading}\n\n${open(partName)}\n${close(partName)}\n${close(name)}\n`;
  }
  const at = block(text, partName);
  if (!at) throw new Error(`bench/RESULTS.md: section ${name} has no ${part} part`);
  return `${text.slice(0, at.start)}${open(partName)}\n${content}\n${close(partName)}${text.slice(at.end)}`;
}

/** `text` with the whole section `name` replaced by `content` (appended when absent). */
export function replaceWholeSection(text, name, content) {
  const replacement = `${open(name)}\n${content}\n${close(name)}`;
  const at = block(text, name);
  return at ? `${text.slice(0, at.start)}${replacement}${text.slice(at.end)}` : `${text.trimEnd()}\n\n${replacement}\n`;
}

/** The sections other scripts wrote into `text`, whole, in order: bench/run.mjs keeps them when it rewrites the file. */
export function keptSections(text) {
  return text.match(/<!-- section: ([\w-]+) -->[\s\S]*?<!-- end section: \1 -->/g) ?? [];
}

/**
 * Writes `lines` as the `measured` part of section `name` of bench/RESULTS.md (appended under `heading` when the
 * section is absent) and says so on stderr, naming `what`.
 */
export function writeMeasuredSection(name, heading, lines, what) {
  const file = join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(file, replaceSection(readFileSync(file, 'utf8'), name, 'measured', lines.join('\n'), heading));
  console.error(`bench: wrote ${what} into bench/RESULTS.md`);
}
