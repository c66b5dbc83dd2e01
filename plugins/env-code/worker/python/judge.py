# The judge's interpreter (see src/sandbox/PyodideSandbox.ts): a Pyodide of its own that runs the `assert` tests and
# never the solution's code. A name a test takes from the solution is asked of the solution's interpreter through
# the host's channel (rpc, pyodideWorker.mjs): plain data arrives as fresh values of exact built-in types, a module or
# a standard-library object as the judge's own, and anything else as a _Remote, which can be called, read (a named
# attribute) or iterated through the solution's interpreter but converts to nothing and is equal only to itself.
# Builtins are the judge's own: a solution's `len` or `sorted` does not replace them in the tests.
import importlib, types

_link = None  # while a run's tests run: {'rpc', 'ended', 'text', 'retire'}
_BUILTIN_NAMES = frozenset(vars(builtins))
_STDLIB = frozenset(sys.stdlib_module_names) | {'builtins'}
_judge_exec = exec
_judge_compile = compile

class _RunEnded(BaseException):
    """The solution's interpreter ended the run (its deadline, its memory, its death): the tests left fail with it."""

class SolutionError(Exception):
    """An exception the solution raised that is not one of Python's built-in ones, as `Type: message`."""

def _ask(request):
    link = _link
    reply = _loads(link['rpc'](_dumps(request)))
    if 'ended' in reply:
        link['ended'], link['text'] = reply['ended'], reply.get('text')
        link['retire'] = link['retire'] or bool(reply.get('retire'))
        raise _RunEnded(reply['ended'])
    if reply.get('stdout'):
        sys.stdout.write(reply['stdout'])
    if 'error' in reply:
        raise _raised(reply['error'])
    return reply

def _raised(error):
    kind = getattr(builtins, error['type'], None) if error.get('builtin') else None
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(error['message'])
    return SolutionError(f"{error['type']}: {error['message']}" if error['message'] else error['type'])

def _stdlib_object(module, qualname):
    parts = qualname.split('.')
    if module.partition('.')[0] not in _STDLIB or any(p.startswith('_') for p in parts):
        return _MISSING
    try:
        value = importlib.import_module(module)
        for part in parts:
            value = getattr(value, part)
    except Exception:
        return _MISSING
    return value

def _value_of(reply):
    if reply.get('missing'):
        return _MISSING
    if reply.get('stop'):
        raise StopIteration
    if 'module' in reply:
        name = reply['module']
        if name.partition('.')[0] not in _STDLIB:
            raise ImportError(f"module '{name}' the solution imported is not available to the tests")
        return importlib.import_module(name)
    if 'attr' in reply:
        found = _stdlib_object(*reply['attr'])
        if found is not _MISSING:
            return found
    return _plain_decode(reply['value'], _remote)

def _send(value):
    def refer(v):
        if type(v) is _Remote:
            return '{"$":"ref","id":' + str(v._id) + '}'
        raise TypeError('only plain data and values of the solution can be passed to the solution')
    return _plain_encode(value, refer)

class _Remote:
    __slots__ = ('_id', '_type')

    def __init__(self, id, type_name):
        self._id = id
        self._type = type_name

    def __call__(self, *args, **kwargs):
        sent = {'args': [_send(a) for a in args], 'kwargs': [[k, _send(v)] for k, v in kwargs.items()]}
        return _value_of(_ask({'op': 'call', 'ref': self._id, **sent}))

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _value_of(_ask({'op': 'get', 'ref': self._id, 'name': name}))

    def __iter__(self):
        return _value_of(_ask({'op': 'iter', 'ref': self._id}))

    def __next__(self):
        return _value_of(_ask({'op': 'next', 'ref': self._id}))

    def __bool__(self):
        raise TypeError(f'a {self._type} from the solution is not plain data: it has no truth value here')

    def __repr__(self):
        return f'<{self._type} from the solution>'

class _Opaque:
    __slots__ = ('_type',)

    def __init__(self, type_name):
        self._type = type_name

    def __bool__(self):
        raise TypeError(f'a {self._type} from the solution is not plain data: it has no truth value here')

    def __repr__(self):
        return f'<{self._type} from the solution>'

def _remote(node):
    kind = node.get('type', 'object')
    return _Remote(node['id'], kind) if node.get('$') == 'ref' else _Opaque(kind)

class _SolutionScope(dict):
    """The tests' globals: what they define, then the judge's builtins, then the solution's names, asked when used."""
    def __missing__(self, name):
        if name in _BUILTIN_NAMES or name.startswith('__'):
            raise KeyError(name)
        value = _value_of(_ask({'op': 'name', 'name': name}))
        if value is _MISSING:
            raise KeyError(name)
        if type(value) is types.ModuleType:
            self[name] = value
        return value

def _failure(error):
    return str(error) if type(error) is SolutionError else _describe(error)

def _judge_run(request_json, rpc):
    """Runs the `assert` tests; `rpc(text) -> text` asks the solution's interpreter. Observations for the host."""
    global _link
    request = _loads(request_json)
    link = _link = {'rpc': rpc, 'ended': None, 'text': None, 'retire': False}
    scope = _SolutionScope(__name__='__main__', __builtins__=builtins)
    results, status, error = [], 'ok', None
    try:
        for test in request['tests']:
            out = _Bounded(request['maxOutputChars'])
            failure = None
            _output_to(out)
            try:
                _judge_exec(_judge_compile(test['code'], test['name'], 'exec'), scope)
            except _RunEnded:
                pass
            except (KeyboardInterrupt, MemoryError):
                raise
            except BaseException as raised:
                failure = _failure(raised)
            finally:
                _output_restored()
            # A run the solution's interpreter ended stays ended, whatever the test did with the exception.
            if link['ended'] is not None:
                break
            observation = {'index': test['index'], 'stdout': out.getvalue()}
            if failure is not None:
                observation['error'] = failure
            results.append(observation)
    except KeyboardInterrupt:
        status, error = 'timeout', _TIMEOUT
    except MemoryError:
        status, error = 'memory', _MEMORY
    finally:
        _restore()
    if link['ended'] is not None:
        status = link['ended']
        error = link['text'] or {'timeout': _TIMEOUT, 'memory': _MEMORY}.get(status, 'error: the solution stopped answering')
    return _dumps({'status': status, 'error': error, 'tests': results, 'retire': link['retire']})
