// The Pyodide sandbox's worker thread (see src/sandbox/PyodideSandbox.ts), in one of two roles: `solution`, the
// interpreter that runs a solution (python/solution.py), or `judge`, the interpreter that runs the `assert` tests and
// never a solution's code (python/judge.py), asking the solution's interpreter for the names the tests use over a
// MessagePort the host hands both (a synchronous call: the judge waits on a shared counter the solution's side bumps).
// Plain JavaScript: a worker needs a file Node can run as it is, from the sources (tests) as from dist.
//
// Layers, each proven by the attack corpus (test/reliability/sandboxAttacks.test.ts):
// 1. Node modules: this thread's CommonJS loader refuses child_process, ws, net, http... always, and every module
//    once Pyodide has loaded, so Emscripten's `system()` and socket layer (which `require` them on use) fail.
// 2. This thread's JavaScript realm: no code generation from strings (eval, Function and the constructors of the
//    function kinds are replaced), no `fetch`/`WebSocket`/`require`, and the Pyodide API's host-reaching functions
//    (mountNodeFS, loadPackage, loadBinaryFile, the NODEFS file system, ...) replaced by throwers, so a Python guest
//    that gets hold of a JsProxy (they are reachable through gc) finds nothing to call.
// 3. Python: `js`, `pyodide_js`, `pyodide`, `_pyodide*`, sockets, subprocess and ctypes cannot be imported, and
//    os.system/popen/fork/exec*/spawn*/kill raise PermissionError (python/sandbox.py).
// 4. Resources: the wasm heap may grow only `memoryBytes` past its size at start (growth beyond raises MemoryError
//    in Python), the host interrupts Python at the deadline (KeyboardInterrupt) and terminates this thread when it
//    does not stop, and the thread's own V8 heap is bounded by the Worker's resourceLimits.
import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';

const ROLE = workerData.role === 'judge' ? 'judge' : 'solution';
const harness = ['sandbox.py', 'plain.py', `${ROLE}.py`].map((name) => readFileSync(new URL(`./python/${name}`, import.meta.url), 'utf8'));

const NEVER_LOADED = new Set([
  'child_process',
  'cluster',
  'dgram',
  'dns',
  'http',
  'http2',
  'https',
  'inspector',
  'net',
  'tls',
  'vm',
  'worker_threads',
  'ws',
]);
let loaderLocked = false;
const originalLoad = Module._load;
Module._load = function load(request, ...rest) {
  const name = String(request).replace(/^node:/, '');
  if (loaderLocked || NEVER_LOADED.has(name)) throw new Error(`module "${request}" is not available in the sandbox`);
  return originalLoad.call(this, request, ...rest);
};

const WASM_PAGE = 65536;
let heapCap = Infinity;
const originalGrow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function grow(pages) {
  if (this.buffer.byteLength + pages * WASM_PAGE > heapCap) throw new RangeError('sandbox memory limit reached');
  return originalGrow.call(this, pages);
};

const { loadPyodide, version } = await import('pyodide');
const output = { write: () => {} };
const pyodide = await loadPyodide({
  jsglobals: Object.create(null),
  env: { HOME: '/home/pyodide' },
  stdout: (line) => output.write(line),
  stderr: (line) => output.write(line),
});
pyodide.setInterruptBuffer(new Int32Array(workerData.interruptBuffer));

function refuse(what) {
  return function refused() {
    throw new Error(`${what} is not available in the sandbox`);
  };
}

function lockDown() {
  loaderLocked = true;
  const noCodeGeneration = refuse('code generation from strings');
  for (const kind of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    Object.defineProperty(Object.getPrototypeOf(kind), 'constructor', { value: noCodeGeneration, writable: false, configurable: false });
  }
  // Pyodide tests `x instanceof Function`: keep the prototype, lose the constructor.
  noCodeGeneration.prototype = Function.prototype;
  globalThis.Function = noCodeGeneration;
  for (const name of ['eval', 'fetch', 'WebSocket', 'require', 'module', 'XMLHttpRequest', 'importScripts']) delete globalThis[name];
  const pyodideApi = ['mountNodeFS', 'mountNativeFS', 'loadPackage', 'loadPackagesFromImports', 'registerJsModule', 'unregisterJsModule'];
  for (const name of pyodideApi) pyodide[name] = refuse(`pyodide.${name}`);
  for (const name of ['setStdout', 'setStderr', 'setStdin', 'setInterruptBuffer']) pyodide[name] = refuse(`pyodide.${name}`);
  const api = pyodide._api;
  for (const name of Object.keys(api)) {
    if (typeof api[name] === 'function' && /load|mount|fetch|script|install|package|dynlib|socket/i.test(name))
      api[name] = refuse(`pyodide API ${name}`);
  }
  const emscripten = pyodide._module;
  for (const name of ['loadDynamicLibrary', 'loadWebAssemblyModule', '__emscripten_system', 'initRandomFill']) {
    if (name in emscripten) emscripten[name] = refuse(name);
  }
  // Only the in-memory file system stays mountable; the others reach host files, handles or storage.
  for (const name of Object.keys(pyodide.FS.filesystems)) if (name !== 'MEMFS') delete pyodide.FS.filesystems[name];
}

// Captured before lockDown: the random source is seeded from node:crypto once, at startup.
pyodide.runPython('import random, os; random.random(); os.urandom(1)');
lockDown();
heapCap = pyodide._module.HEAP8.buffer.byteLength + workerData.memoryBytes;

for (const source of harness) pyodide.runPython(source);
pyodide.runPython('_take_snapshot()');

/** How long past the run's deadline the judge waits for an answer of the solution's before it gives up. */
const WAIT_GRACE_MS = 500;
const TIMEOUT_TEXT = 'timeout: the run exceeded its time limit';

function fatalText(error) {
  return String(error?.message ?? error)
    .split('\n')
    .slice(-3)
    .join(' ');
}

/** Replies to the host: the result, or the harness's own failure (a fatal Pyodide error: the host replaces this worker). */
function answer(id, call) {
  try {
    parentPort.postMessage({ id, result: JSON.parse(call()) });
  } catch (error) {
    parentPort.postMessage({ id, fatal: fatalText(error) });
  }
}

if (ROLE === 'solution') {
  const run = pyodide.globals.get('_solution_run');
  const rpc = pyodide.globals.get('_solution_rpc');
  const end = pyodide.globals.get('_solution_end');
  const interrupt = new Int32Array(workerData.interruptBuffer);
  let link;
  /** Answers the judge's requests on the run's port until the host ends the run. */
  const serve = ({ port, flag }) => {
    link = port;
    port.on('message', ({ seq, text }) => {
      let reply;
      try {
        reply = rpc(text);
      } catch (error) {
        reply = JSON.stringify({ ended: 'error', text: `error: the Python interpreter failed (${fatalText(error)})`, retire: true });
      }
      port.postMessage({ seq, text: reply });
      Atomics.add(flag, 0, 1);
      Atomics.notify(flag, 0);
    });
  };
  parentPort.on('message', (message) => {
    if (message.op === 'end') {
      link?.close();
      link = undefined;
      Atomics.store(interrupt, 0, 0);
      end();
      return;
    }
    const { id, link: judgeLink, ...request } = message;
    answer(id, () => {
      const result = run(JSON.stringify(request), judgeLink !== undefined);
      if (judgeLink !== undefined) {
        if (JSON.parse(result).status === 'ok') serve(judgeLink);
        else judgeLink.port.close();
      }
      return result;
    });
  });
} else {
  const judge = pyodide.globals.get('_judge_run');
  parentPort.on('message', ({ id, link, ...request }) => {
    const { port, flag, deadline } = link;
    let seq = 0;
    /** A request to the solution's interpreter, answered synchronously: this thread waits on the shared counter. */
    const rpc = (text) => {
      seq += 1;
      let seen = Atomics.load(flag, 0);
      port.postMessage({ seq, text });
      for (;;) {
        for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port))
          if (m.message.seq === seq) return m.message.text;
        if (Atomics.load(flag, 1) !== 0)
          return JSON.stringify({ ended: 'error', text: 'error: the Python worker of the solution exited', retire: true });
        const left = deadline + WAIT_GRACE_MS - Date.now();
        if (left <= 0) return JSON.stringify({ ended: 'timeout', text: TIMEOUT_TEXT, retire: true });
        Atomics.wait(flag, 0, seen, left);
        seen = Atomics.load(flag, 0);
      }
    };
    answer(id, () => judge(JSON.stringify(request), rpc));
    port.close();
  });
}
parentPort.postMessage({ ready: true, version });
