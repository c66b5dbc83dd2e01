import type { ApplyContext } from '../kernel/ApplyContext.js';
import { createToken } from '../di/Token.js';

/** A section of `drmas info` a plugin contributes (worker groups, the selected orchestra, ...). */
export interface InfoSection {
  /** Key in `info --json` and heading in the text report. */
  readonly title: string;
  /** Plain JSON data: a list of rows (objects) or an object of values. */
  describe(kernel: ApplyContext): unknown;
}
export const InfoSection = createToken<InfoSection>('InfoSection', { label: 'info section' });
