# The Pyodide sandbox's interpreter set-up, shared by the solution's worker and the judge's (see pyodideWorker.mjs):
# imports of the JavaScript bridge, sockets, subprocesses and ctypes refused, process functions refused, and the
# interpreter's state restored after every run. Runs in __main__ before plain.py and the role's file; a run's code
# never runs in __main__.
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

def _no_audit_hooks(hook):
    raise PermissionError('audit hooks are not available in the sandbox')

# An audit hook cannot be removed: one added by a run would outlive it.
sys.addaudithook = _no_audit_hooks

_dumps = json.dumps
_loads = json.loads
_MISSING = object()
_TIMEOUT = 'timeout: the run exceeded its time limit'
_MEMORY = 'memory: the run exceeded its memory limit'
_WRITABLE = ('/tmp', '/home/pyodide')

def _take_snapshot():
    """The state every run starts from, taken once this interpreter's harness is complete (pyodideWorker.mjs)."""
    global _BUILTINS, _MODULES, _MODULE_DICTS, _CLASS_DICTS, _SYS, _SYS_LISTS, _ENVIRON, _RECURSION, _FILES, _CWD
    _BUILTINS = dict(builtins.__dict__)
    _MODULES = dict(sys.modules)
    _SYS = {k: getattr(sys, k) for k in ('meta_path', 'path', 'path_hooks', 'stdin', 'stdout', 'stderr', 'excepthook')}
    _SYS_LISTS = {'meta_path': list(sys.meta_path), 'path': list(sys.path), 'path_hooks': list(sys.path_hooks)}
    _ENVIRON = dict(os.environ)
    _RECURSION = sys.getrecursionlimit()
    _FILES = {d: set(os.listdir(d)) for d in _WRITABLE if os.path.isdir(d)}
    _CWD = os.getcwd()
    # Last, and __main__ too: a run that rebinds the harness's own names (import __main__) is undone like any module.
    _MODULE_DICTS = {name: dict(module.__dict__) for name, module in _MODULES.items() if module is not None}
    _MODULE_DICTS['__main__']['_MODULE_DICTS'] = _MODULE_DICTS
    # The harness's own classes (the output buffer...): a run that patches one does not reach the next run.
    main = sys.modules['__main__']
    _CLASS_DICTS = {c: dict(vars(c)) for c in vars(main).values() if isinstance(c, type) and c.__module__ == '__main__'}
    _MODULE_DICTS['__main__']['_CLASS_DICTS'] = _CLASS_DICTS

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

def _output_to(out):
    sys.stdout = sys.stderr = out

def _output_restored():
    sys.stdout, sys.stderr = _SYS['stdout'], _SYS['stderr']

def _restore():
    sys.stdin, sys.stdout, sys.stderr = _SYS['stdin'], _SYS['stdout'], _SYS['stderr']
    sys.settrace(None)
    sys.setprofile(None)
    for tool in range(6):
        if sys.monitoring.get_tool(tool) is not None:
            sys.monitoring.set_events(tool, 0)
            sys.monitoring.free_tool_id(tool)
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
    for cls, saved in _CLASS_DICTS.items():
        current = vars(cls)
        for key in [k for k in current if k not in saved]:
            delattr(cls, key)
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                setattr(cls, key, value)
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
    _output_to(out)
    sys.stdin = io.StringIO(stdin)
    try:
        exec(compile(code, name, 'exec'), namespace)
    except SystemExit:
        pass
