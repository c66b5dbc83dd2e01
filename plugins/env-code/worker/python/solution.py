# The solution's interpreter (see src/sandbox/PyodideSandbox.ts). It loads a solution in a fresh namespace and runs
# its `call` tests (the value written as plain data for the host to compare), `exec` snippets and `stdio` programs.
# When the run has `assert` tests it keeps the namespace while the judge (judge.py, another interpreter) asks for the
# solution's names and calls its functions through the host's channel (pyodideWorker.mjs). Nothing here decides a
# verdict: whatever the solution does to this interpreter, what leaves it is plain data the host or the judge compares.
import types

_run = None  # the loaded solution while the judge's tests run: {'ns', 'refs', 'max_output', 'ended'}
_BUILTIN_EXCEPTIONS = frozenset(v for v in vars(builtins).values() if isinstance(v, type) and issubclass(v, BaseException))

def _observe(test, action, max_output):
    """One test's observation: the plain data it returned (call), the error it raised, what it printed."""
    out = _Bounded(max_output)
    observation = {'index': test['index']}
    try:
        value = action(out)
        if value is not None:
            observation['value'] = value
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as failure:
        observation['error'] = _describe(failure)
    finally:
        _output_restored()
    observation['stdout'] = out.getvalue()
    return observation

def _in_scope(test, namespace, out):
    _output_to(out)
    if test['kind'] == 'exec':
        _exec(test['code'], test['name'], namespace, out)
        return None
    fn = namespace.get(test['fn'], _MISSING)
    if fn is _MISSING:
        raise NameError(f"name '{test['fn']}' is not defined")
    return _plain_encode(fn(*test['args']))

def _solution_run(request_json, serve):
    """Loads the solution and runs its own tests; with `serve`, keeps it loaded for the judge until _solution_end."""
    global _run
    request = _loads(request_json)
    code, tests, max_output = request['code'], request['tests'], request['maxOutputChars']
    results, status, error, load_stdout, kept = [], 'ok', None, '', False
    try:
        in_scope = [t for t in tests if t['kind'] != 'stdio']
        if in_scope or serve or not tests:
            namespace = {'__name__': '__main__', '__builtins__': builtins}
            out = _Bounded(max_output)
            try:
                _exec(code, 'solution.py', namespace, out)
            except (KeyboardInterrupt, MemoryError):
                raise
            except BaseException as failure:
                return _dumps({'status': 'error', 'error': _describe(failure), 'stdout': out.getvalue(), 'tests': []})
            finally:
                _output_restored()
            load_stdout = out.getvalue()
            for test in in_scope:
                results.append(_observe(test, lambda out, test=test: _in_scope(test, namespace, out), max_output))
        for test in tests:
            if test['kind'] == 'stdio':
                program = {'__name__': '__main__', '__builtins__': builtins}
                results.append(_observe(test, lambda out, test=test: _exec(code, 'solution.py', program, out, test['stdin']), max_output))
        if serve:
            _run = {'ns': namespace, 'refs': [], 'max_output': max_output, 'ended': None}
            kept = True
    except KeyboardInterrupt:
        status, error = 'timeout', _TIMEOUT
    except MemoryError:
        status, error = 'memory', _MEMORY
    finally:
        if not kept:
            _restore()
    return _dumps({'status': status, 'error': error, 'stdout': load_stdout, 'tests': results})

def _solution_end():
    global _run
    _run = None
    _restore()

def _refer(refs):
    def refer(value):
        refs.append(value)
        call = ',"call":true' if callable(value) else ''
        return '{"$":"ref","id":' + str(len(refs) - 1) + ',"type":' + _escape_string(_type_name_of(value)) + call + '}'
    return refer

def _shown(run, value):
    """What the judge gets for a value: a module or a standard-library object by name, else plain data or a reference."""
    kind = type(value)
    if kind is types.ModuleType:
        return {'module': value.__name__}
    reply = {'value': _plain_encode(value, _refer(run['refs']))}
    if kind is types.BuiltinFunctionType or kind is types.FunctionType or kind is type:
        module, name = getattr(value, '__module__', None), getattr(value, '__qualname__', None)
        if type(module) is str and type(name) is str and module != '__main__':
            reply['attr'] = [module, name]
    return reply

def _rpc_name(run, request):
    value = run['ns'].get(request['name'], _MISSING)
    return {'missing': True} if value is _MISSING else _shown(run, value)

def _rpc_call(run, request):
    refs = run['refs']
    resolve = lambda node: refs[node['id']]
    args = [_plain_decode(a, resolve) for a in request['args']]
    kwargs = {k: _plain_decode(v, resolve) for k, v in request['kwargs']}
    return _shown(run, refs[request['ref']](*args, **kwargs))

def _rpc_get(run, request):
    return _shown(run, getattr(run['refs'][request['ref']], request['name']))

def _rpc_iter(run, request):
    return _shown(run, iter(run['refs'][request['ref']]))

def _rpc_next(run, request):
    try:
        return _shown(run, next(run['refs'][request['ref']]))
    except StopIteration:
        return {'stop': True}

_RPC = {'name': _rpc_name, 'call': _rpc_call, 'get': _rpc_get, 'iter': _rpc_iter, 'next': _rpc_next}

def _solution_rpc(request_json):
    """One request of the judge's: a name, a call, an attribute or the next item, answered as plain data or a reference."""
    run = _run
    if run is None:
        return '{"ended":"error","text":"error: the solution is not loaded"}'
    if run['ended'] is not None:
        return _dumps({'ended': run['ended']})
    request = _loads(request_json)
    out = _Bounded(run['max_output'])
    _output_to(out)
    try:
        reply = _RPC[request['op']](run, request)
    except KeyboardInterrupt:
        run['ended'] = 'timeout'
        return '{"ended":"timeout"}'
    except MemoryError:
        run['ended'] = 'memory'
        return '{"ended":"memory"}'
    except BaseException as failure:
        message = _describe(failure).partition(': ')[2]
        reply = {'error': {'type': type(failure).__name__, 'builtin': type(failure) in _BUILTIN_EXCEPTIONS, 'message': message}}
    finally:
        _output_restored()
    reply['stdout'] = out.getvalue()
    return _dumps(reply)
