import { createToken } from '../di/Token.js';

/**
 * State that must survive a restart for a resumed run to continue exactly (data cursors, random generators,
 * schedules). Every bound Checkpointable is saved with each checkpoint under its `key` and restored on resume.
 */
export interface Checkpointable {
  readonly key: string;
  getState(): unknown;
  setState(state: unknown): void;
}
export const Checkpointable = createToken<Checkpointable>('Checkpointable', { label: 'checkpointable state' });
