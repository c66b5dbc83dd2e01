/**
 * Jest's node environment with Node's own typed-array constructors. onnxruntime-node's native binding creates
 * output data in Node's realm, and onnxruntime-common (loaded inside the test context) checks it with
 * `instanceof Float32Array`, which fails against the test context's constructors. It is the environment of every
 * test (jest.config.js), so any test may run onnxruntime.
 */
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
    // onnxruntime-node's telemetry would leave a /tmp/mat-debug-<pid>.log for each of the suite's processes: the
    // worker's own, and those its tests start (they inherit the test context's copy of the environment).
    process.env.ORT_DISABLE_TELEMETRY ??= '1';
    this.global.process.env.ORT_DISABLE_TELEMETRY ??= '1';
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}

module.exports = NodeEnvironmentWithSharedTypedArrays;
