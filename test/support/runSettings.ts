/** `--set` settings for one training step and nothing else: no evaluation, no checkpoint before the last, no report. */
export const ONE_QUIET_STEP = [
  'eval.atStart=false',
  'eval.atEnd=false',
  'trainer.steps=1',
  'trainer.saveEvery=0',
  'report.html=false',
  'report.progress=off',
];

/** `settings` as the CLI's `--set` flags. */
export function setFlags(settings: readonly string[]): string[] {
  return settings.flatMap((set) => ['--set', set]);
}
