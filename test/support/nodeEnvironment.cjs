/**
 * Jest's node environment with Node's own typed-array constructors. onnxruntime-node's native binding creates
 * output data in Node's realm, and onnxruntime-common (loaded inside the test context) checks it with
 * `instanceof Float32Array`, which fails against the test context's constructors. It is the environment of every
 * test (jest.config.js), so any test may run onnxruntime.
 *
 * Each test file also gets a temporary folder of its own as `TMPDIR`, removed when the file ends: what its tests and
 * the processes they start write under `os.tmpdir()` goes with it, also where a file's `afterAll` never runs (every
 * test skipped) or a server it started made a folder of its own.
 */
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const SHARED = [
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'Float32Array',
  'Float64Array',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'BigInt64Array',
  'BigUint64Array',
];

class NodeEnvironmentWithSharedTypedArrays extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    // drmas turns onnxruntime's telemetry off by setting ORT_DISABLE_TELEMETRY in process.env before loading it, but a
    // test sees a copy of process.env that onnxruntime's native code never reads: the worker's real environment is set
    // here, and the copy too, for the processes the tests start.
    process.env.ORT_DISABLE_TELEMETRY ??= '1';
    this.global.process.env.ORT_DISABLE_TELEMETRY ??= '1';
    for (const name of SHARED) this.global[name] = globalThis[name];
  }

  async setup() {
    await super.setup();
    this.outerTmpdir = process.env.TMPDIR;
    this.tmpdir = mkdtempSync(path.join(os.tmpdir(), 'drmas-test-'));
    this.setTmpdir(this.tmpdir);
  }

  async teardown() {
    this.setTmpdir(this.outerTmpdir);
    if (this.tmpdir) rmSync(this.tmpdir, { recursive: true, force: true, maxRetries: 3 });
    await super.teardown();
  }

  /** `TMPDIR` in the worker's real environment (what `os.tmpdir()` and started processes read) and the test's copy. */
  setTmpdir(value) {
    for (const env of [process.env, this.global.process.env]) {
      if (value === undefined) delete env.TMPDIR;
      else env.TMPDIR = value;
    }
  }
}

module.exports = NodeEnvironmentWithSharedTypedArrays;
