// The Pyodide sandbox's worker thread (see src/sandbox/PyodideSandbox.ts). Plain JavaScript: a worker needs a file
// Node can run as it is, from the sources (tests) as from dist.
//
// Layers, each proven by the attack corpus (test/reliability/sandboxAttacks.test.ts):
// 1. Node modules: this thread's CommonJS loader refuses child_process, ws, net, http... always, and every module
//    once Pyodide has loaded, so Emscripten's `system()` and socket layer (which `require` them on use) fail.
// 2. This thread's JavaScript realm: no code generation from strings (eval, Function and the constructors of the
//    function kinds are replaced), no `fetch`/`WebSocket`/`require`, and the Pyodide API's host-reaching functions
//    (mountNodeFS, loadPackage, loadBinaryFile, the NODEFS file system, ...) replaced by throwers, so a Python guest
//    that gets hold of a JsProxy (they are reachable through gc) finds nothing to call.
// 3. Python: `js`, `pyodide_js`, `pyodide`, `_pyodide*`, sockets, subprocess and ctypes cannot be imported, and
//    os.system/popen/fork/exec*/spawn*/kill raise PermissionError.
// 4. Resources: the wasm heap may grow only `memoryBytes` past its size at start (growth beyond raises MemoryError
//    in Python), the host interrupts Python at the deadline (KeyboardInterrupt) and terminates this thread when it
//    does not stop, and the thread's own V8 heap is bounded by the Worker's resourceLimits.
import Module from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

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

const HARNESS = String.raw`
import sys, os, posix, io, json, builtins, shutil

_BLOCKED = frozenset({'js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip', 'socket', '_socket',
    'select', 'selectors', 'ssl', '_ssl', 'subprocess', '_posixsubprocess', 'multiprocessing', 'ctypes', '_ctypes'})

class _SandboxImportBlocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in _BLOCKED:
            raise ImportError(f"module '{name}' is not available in the sandbox")
        return None

sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__.partition('.')[0] not in _BLOCKED]
sys.meta_path.insert(0, _SandboxImportBlocker())
for _name in list(sys.modules):
    if _name.partition('.')[0] in _BLOCKED:
        del sys.modules[_name]

def _no_processes(*args, **kwargs):
    raise PermissionError('processes are not available in the sandbox')

for _module in (os, posix):
    for _fn in ('system', 'popen', 'fork', 'forkpty', 'execv', 'execve', 'execl', 'execle', 'execlp', 'execlpe',
                'execvp', 'execvpe', 'spawnv', 'spawnve', 'spawnl', 'spawnle', 'spawnlp', 'spawnlpe', 'spawnvp',
                'spawnvpe', 'posix_spawn', 'posix_spawnp', 'kill', 'killpg'):
        if hasattr(_module, _fn):
            setattr(_module, _fn, _no_processes)

_BUILTINS = dict(builtins.__dict__)
_MODULES = dict(sys.modules)
# __main__ holds this harness (and a run's code never runs in it); every other module is restored after each run.
_MODULE_DICTS = {name: dict(module.__dict__) for name, module in _MODULES.items() if module is not None and name != '__main__'}
_SYS = {k: getattr(sys, k) for k in ('meta_path', 'path', 'path_hooks', 'stdin', 'stdout', 'stderr', 'excepthook')}
_SYS_LISTS = {'meta_path': list(sys.meta_path), 'path': list(sys.path), 'path_hooks': list(sys.path_hooks)}
_ENVIRON = dict(os.environ)
_RECURSION = sys.getrecursionlimit()
_MISSING = object()
_WRITABLE = ('/tmp', '/home/pyodide')
_FILES = {d: set(os.listdir(d)) for d in _WRITABLE if os.path.isdir(d)}
_CWD = os.getcwd()

class _Bounded(io.StringIO):
    def __init__(self, limit):
        super().__init__()
        self._left = limit
    def write(self, text):
        text = str(text)
        kept = text[:max(self._left, 0)]
        self._left -= len(kept)
        super().write(kept)
        return len(text)

def _describe(error):
    text = f'{type(error).__name__}: {error}' if str(error) else type(error).__name__
    return text.splitlines()[0][:300] if text else type(error).__name__

def _value_json(value):
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return json.dumps(f'<{type(value).__name__}: {repr(value)[:60]}>')

def _restore():
    sys.stdin, sys.stdout, sys.stderr = _SYS['stdin'], _SYS['stdout'], _SYS['stderr']
    for key, value in _SYS.items():
        if key not in _SYS_LISTS and key not in ('stdin', 'stdout', 'stderr'):
            setattr(sys, key, value)
    for key, items in _SYS_LISTS.items():
        setattr(sys, key, _SYS[key])
        _SYS[key][:] = items
    builtins.__dict__.clear()
    builtins.__dict__.update(_BUILTINS)
    # Rebinding a module's attribute (math.pi = 3, json.dumps = ...) is undone; keys are set, never cleared, so this
    # function's own module stays readable while it runs.
    for name, saved in _MODULE_DICTS.items():
        current = _MODULES[name].__dict__
        for key in [k for k in current if k not in saved]:
            del current[key]
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                current[key] = value
    for name in list(sys.modules):
        if name not in _MODULES:
            del sys.modules[name]
    sys.modules.update(_MODULES)
    os.environ.clear()
    os.environ.update(_ENVIRON)
    sys.setrecursionlimit(_RECURSION)
    os.chdir(_CWD)
    for folder, names in _FILES.items():
        for name in set(os.listdir(folder)) - names:
            path = os.path.join(folder, name)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)

def _exec(code, name, namespace, out, stdin=''):
    sys.stdout = sys.stderr = out
    sys.stdin = io.StringIO(stdin)
    try:
        exec(compile(code, name, 'exec'), namespace)
    except SystemExit:
        pass

def _run_in_scope(test, namespace, out):
    sys.stdout = sys.stderr = out
    if test['kind'] == 'assert':
        _exec(test['code'], test['name'], namespace, out)
        return None
    if test['fn'] not in namespace:
        raise NameError(f"name '{test['fn']}' is not defined")
    return _value_json(namespace[test['fn']](*test['args']))

def _test_result(test, action, max_output):
    """One test's report: its error, or the JSON of the value it returned; what it printed. Deadline and memory end the run."""
    out = _Bounded(max_output)
    result = {'name': test['name']}
    try:
        actual = action(out)
        if actual is not None:
            result['actual'] = actual
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as failure:
        result['error'] = _describe(failure)
    result['stdout'] = out.getvalue()
    return result

def _drmas_run(code, tests_json, max_output):
    tests = json.loads(tests_json)
    results, status, error, load_stdout = [], 'ok', None, ''
    try:
        in_scope = [t for t in tests if t['kind'] != 'stdio']
        if in_scope or not tests:
            namespace = {'__name__': '__main__', '__builtins__': builtins}
            out = _Bounded(max_output)
            try:
                _exec(code, 'solution.py', namespace, out)
            except (KeyboardInterrupt, MemoryError):
                raise
            except BaseException as failure:
                status, error, load_stdout = 'error', _describe(failure), out.getvalue()
                return json.dumps({'status': status, 'error': error, 'stdout': load_stdout, 'tests': []})
            load_stdout = out.getvalue()
            for test in in_scope:
                results.append(_test_result(test, lambda out, test=test: _run_in_scope(test, namespace, out), max_output))
        for test in tests:
            if test['kind'] == 'stdio':
                program = {'__name__': '__main__', '__builtins__': builtins}
                results.append(_test_result(test, lambda out, test=test: _exec(code, 'solution.py', program, out, test['stdin']), max_output))
    except KeyboardInterrupt:
        status, error = 'timeout', 'timeout: the run exceeded its time limit'
    except MemoryError:
        status, error = 'memory', 'memory: the run exceeded its memory limit'
    finally:
        _restore()
    return json.dumps({'status': status, 'error': error, 'stdout': load_stdout, 'tests': results})
`;

pyodide.runPython(HARNESS);
const run = pyodide.globals.get('_drmas_run');

parentPort.on('message', (request) => {
  try {
    const result = run(request.code, JSON.stringify(request.tests), request.maxOutputChars);
    parentPort.postMessage({ id: request.id, result: JSON.parse(result) });
  } catch (error) {
    // The harness itself failed (a fatal Pyodide error): the host replaces this worker.
    parentPort.postMessage({
      id: request.id,
      fatal: String(error?.message ?? error)
        .split('\n')
        .slice(-3)
        .join(' '),
    });
  }
});
parentPort.postMessage({ ready: true, version });
