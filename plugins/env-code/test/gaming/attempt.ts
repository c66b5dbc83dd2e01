import type { CodeTest } from '../../src/index.js';

/**
 * A solution written to fail its task's tests that tries to be scored as passing anyway. `way` groups the attempts:
 * a returned value whose equality or serialized form lies, a replaced piece of what the harness relies on, a run
 * ended or a report forged, a report that arrives late, the expected value read from the harness's stack.
 */
export interface GamingAttempt {
  name: string;
  way: 'lying value' | 'harness replaced' | 'run ended' | 'report forged' | 'late report' | 'stack inspection';
  code: string;
  /** The language's function task (default) or its program (stdin/stdout) task. */
  task?: 'functions' | 'program';
}

/** A tricky but honest solution: every test passes except those named in `failing`. */
export interface HonestSolution {
  name: string;
  code: string;
  tests: CodeTest[];
  failing?: string[];
}
