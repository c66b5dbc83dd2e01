# Plain data between the interpreters and the host (see src/sandbox/plainData.ts for the format). Only values of
# exact built-in types are written out (`type(x) is int`, never isinstance), reading them with the built-in types' own
# methods: nothing of a solution's class (__eq__, __hash__, __repr__, __iter__, items, __class__...) is called, and a
# value is plain only when all of it is. The functions keep what they use in their closure, so rebinding a builtin
# or a module attribute does not change them.
from json.encoder import encode_basestring_ascii as _escape_string

def _make_plain():
    import math
    _type = type
    _id = id
    _int_repr = int.__repr__
    _float_repr = float.__repr__
    _dict_items = dict.items
    _bytes_hex = bytes.hex
    _join = str.join
    _isfinite = math.isfinite
    _escape = _escape_string
    _type_name = type.__dict__['__name__'].__get__
    loads = _loads
    _CONTAINERS = {list: None, tuple: 'tuple', set: 'set', frozenset: 'frozenset'}
    MAX_DEPTH = 100
    MAX_NODES = 1_000_000

    class NotPlain(Exception):
        pass

    def type_name(value):
        return _type_name(_type(value))

    def encode(value, refer=None):
        """The plain-data JSON text of `value`; refer(value) writes what is not plain (else it is written as opaque)."""
        nodes = [0]
        def walk(v, depth, path):
            t = _type(v)
            if v is None:
                return 'null'
            if t is bool:
                return 'true' if v is True else 'false'
            if t is int:
                try:
                    return _int_repr(v)
                except ValueError:  # more digits than int's conversion allows
                    raise NotPlain
            if t is float:
                if _isfinite(v):
                    return _float_repr(v)
                return '{"$":"float","v":"' + ('nan' if v != v else 'inf' if v > 0 else '-inf') + '"}'
            if t is str:
                return _escape(v)
            if t is bytes:
                return '{"$":"bytes","v":"' + _bytes_hex(v) + '"}'
            if t is complex:
                return '{"$":"complex","v":[' + walk(v.real, depth, path) + ',' + walk(v.imag, depth, path) + ']}'
            if t is not dict and t not in _CONTAINERS:
                raise NotPlain
            nodes[0] += 1
            key = _id(v)
            if depth > MAX_DEPTH or nodes[0] > MAX_NODES or key in path:
                raise NotPlain
            path.add(key)
            try:
                if t is dict:
                    pairs = ['[' + walk(k, depth + 1, path) + ',' + walk(x, depth + 1, path) + ']' for k, x in _dict_items(v)]
                    return '{"$":"dict","v":[' + _join(',', pairs) + ']}'
                items = '[' + _join(',', [walk(x, depth + 1, path) for x in v]) + ']'
                tag = _CONTAINERS[t]
                return items if tag is None else '{"$":"' + tag + '","v":' + items + '}'
            finally:
                path.discard(key)
        try:
            return walk(value, 0, set())
        except (NotPlain, RecursionError):
            return refer(value) if refer is not None else '{"$":"opaque","type":' + _escape(type_name(value)) + '}'

    def decode(text, resolve=None):
        """Fresh values of exact built-in types from plain-data text; resolve(node) gives what a reference stands for."""
        def build(d):
            t = _type(d)
            if t is list:
                return [build(x) for x in d]
            if t is not dict:
                return d
            tag, v = d.get('$'), d.get('v')
            if tag == 'dict':
                return {build(k): build(x) for k, x in v}
            if tag == 'tuple':
                return tuple(build(x) for x in v)
            if tag == 'set':
                return {build(x) for x in v}
            if tag == 'frozenset':
                return frozenset(build(x) for x in v)
            if tag == 'float':
                return float(v)
            if tag == 'bytes':
                return bytes.fromhex(v)
            if tag == 'complex':
                return complex(build(v[0]), build(v[1]))
            if tag == 'bigint':
                return int(v)
            if tag in ('ref', 'opaque') and resolve is not None:
                return resolve(d)
            raise ValueError('the value is not plain data')
        return build(loads(text))

    return encode, decode, type_name

_plain_encode, _plain_decode, _type_name_of = _make_plain()
