// The plain-data toolkit of a QuickJS context (see src/sandbox/runInQuickJs.ts and src/sandbox/plainData.ts).
// Evaluated before any solution code, it keeps the intrinsics it uses in its closure: a solution that later replaces
// Object, Array, JSON or Reflect, pollutes their prototypes or defines getters there changes nothing it does. It reads
// only own data properties of exact built-in objects and never calls anything of the solution's (toJSON, valueOf,
// toString, Symbol.toPrimitive, getters, Proxy traps). The host keeps the returned object's handle; nothing in the
// context refers to it.
//
// Its completion value is makeToolkit(trackProxies) -> { encode, decode, invoke, invokeRef, describe, typeName }.
// With trackProxies (the solution's context), the global Proxy is replaced by one that records every proxy it makes,
// so a proxy is reported as such without touching its traps.
// eslint-disable-next-line @typescript-eslint/no-unused-expressions -- the script's completion value is what the host gets
(function makeToolkit(trackProxies) {
  'use strict';
  const { getPrototypeOf, getOwnPropertyDescriptor, defineProperty, hasOwn, freeze, create } = Object;
  const { apply, construct, ownKeys } = Reflect;
  const { isArray } = Array;
  const { stringify, parse } = JSON;
  const BigIntOf = BigInt;
  const ObjectPrototype = Object.prototype;
  const ArrayPrototype = Array.prototype;
  const weakSetAdd = WeakSet.prototype.add;
  const weakSetHas = WeakSet.prototype.has;
  const MAX_DEPTH = 100;
  const MAX_NODES = 1000000;
  const dataDescriptor = (value) => ({ __proto__: null, value, writable: true, enumerable: true, configurable: true });
  /** A property of an object JSON.parse made, read only when it is its own (never from a polluted prototype). */
  const field = (object, key) => (hasOwn(object, key) ? object[key] : undefined);

  const proxies = new WeakSet();
  const isProxy = (value) => trackProxies && apply(weakSetHas, proxies, [value]);
  if (trackProxies) {
    const RealProxy = Proxy;
    const realRevocable = Proxy.revocable;
    const TrackedProxy = function Proxy(target, handler) {
      if (new.target === undefined) throw new TypeError("constructor 'Proxy' requires 'new'");
      const proxy = construct(RealProxy, [target, handler]);
      apply(weakSetAdd, proxies, [proxy]);
      return proxy;
    };
    const revocable = function revocable(target, handler) {
      const result = apply(realRevocable, RealProxy, [target, handler]);
      apply(weakSetAdd, proxies, [result.proxy]);
      return result;
    };
    defineProperty(TrackedProxy, 'revocable', { value: revocable, writable: true, configurable: true });
    defineProperty(globalThis, 'Proxy', { value: TrackedProxy, writable: true, configurable: true });
  }

  /**
   * An own data property's value, or the reason it has none. The record has no prototype: reading a field it lacks
   * never reaches a getter the solution put on Object.prototype.
   */
  const ownData = (object, key) => {
    const descriptor = getOwnPropertyDescriptor(object, key);
    if (descriptor === undefined) return { __proto__: null, found: false, accessor: false };
    return hasOwn(descriptor, 'value')
      ? { __proto__: null, found: true, accessor: false, value: descriptor.value, enumerable: descriptor.enumerable }
      : { __proto__: null, found: true, accessor: true };
  };

  /** `name` or `message` of an error, own or inherited, from data properties only. */
  const readData = (object, key) => {
    for (let p = object, n = 0; p !== null && n < 64; n++) {
      if (isProxy(p)) return undefined;
      const data = ownData(p, key);
      if (data.found) return data.accessor ? undefined : data.value;
      p = getPrototypeOf(p);
    }
    return undefined;
  };

  const typeName = (value) => {
    if (typeof value === 'function') return 'function';
    if (typeof value !== 'object' || value === null) return typeof value;
    if (isProxy(value)) return 'Proxy';
    const proto = getPrototypeOf(value);
    if (proto === null || isProxy(proto)) return 'object';
    const constructor = ownData(proto, 'constructor');
    if (!constructor.found || constructor.accessor || typeof constructor.value !== 'function' || isProxy(constructor.value))
      return 'object';
    const name = ownData(constructor.value, 'name');
    return name.found && !name.accessor && typeof name.value === 'string' && name.value !== '' ? name.value : 'object';
  };

  const opaque = (type) => '{"$":"opaque","type":' + stringify(type) + '}';

  /**
   * The plain-data JSON text of a value. A value is plain when all of it is: a container with a getter, a function, a
   * Proxy, an instance of a class, a cycle, depth past 100 or more than a million nodes anywhere inside is not.
   * `refer(value)` writes a value that is not plain data (a reference the judge can call back); without it, such a
   * value is written as opaque.
   */
  const encode = (value, refer) => {
    let nodes = 0;
    const plain = (v, depth, up) => {
      switch (typeof v) {
        case 'undefined':
          return 'null';
        case 'boolean':
          return v ? 'true' : 'false';
        case 'number':
          if (v === v && v !== Infinity && v !== -Infinity) return stringify(v);
          return '{"$":"float","v":"' + (v !== v ? 'nan' : v > 0 ? 'inf' : '-inf') + '"}';
        case 'string':
          return stringify(v);
        case 'bigint':
          return '{"$":"bigint","v":"' + v + '"}';
        case 'object':
          if (v === null) return 'null';
          break;
        default:
          return undefined;
      }
      if (isProxy(v) || depth > MAX_DEPTH || ++nodes > MAX_NODES) return undefined;
      for (let link = up; link !== null; link = link.up) if (link.value === v) return undefined;
      const here = { __proto__: null, value: v, up };
      const proto = getPrototypeOf(v);
      if (proto === ArrayPrototype && isArray(v)) {
        const length = ownData(v, 'length').value;
        let text = '[';
        for (let i = 0; i < length; i++) {
          const item = ownData(v, '' + i);
          if (item.accessor) return undefined;
          const inner = item.found ? plain(item.value, depth + 1, here) : 'null';
          if (inner === undefined) return undefined;
          text += (i === 0 ? '' : ',') + inner;
        }
        return text + ']';
      }
      if (proto !== ObjectPrototype && proto !== null) return undefined;
      const keys = ownKeys(v);
      let text = '{"$":"dict","v":[';
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (typeof key !== 'string') continue;
        const item = ownData(v, key);
        if (item.accessor) return undefined;
        if (!item.found || !item.enumerable || item.value === undefined) continue;
        const inner = plain(item.value, depth + 1, here);
        if (inner === undefined) return undefined;
        text += (first ? '' : ',') + '[' + stringify(key) + ',' + inner + ']';
        first = false;
      }
      return text + ']}';
    };
    const text = plain(value, 0, null);
    if (text !== undefined) return text;
    return refer === undefined ? opaque(typeName(value)) : refer(value);
  };

  /** A value from plain-data JSON text; `resolve(id, type, callable)` gives what a reference stands for. */
  const decode = (text, resolve) => {
    const build = (d) => {
      if (typeof d !== 'object' || d === null) return d;
      if (isArray(d)) {
        for (let i = 0; i < d.length; i++) d[i] = build(d[i]);
        return d;
      }
      const tag = field(d, '$');
      const items = isArray(field(d, 'v')) ? field(d, 'v') : [];
      switch (tag) {
        case 'dict': {
          const object = {};
          for (let i = 0; i < items.length; i++) defineProperty(object, '' + items[i][0], dataDescriptor(build(items[i][1])));
          return object;
        }
        case 'tuple':
        case 'set':
        case 'frozenset':
          for (let i = 0; i < items.length; i++) items[i] = build(items[i]);
          return items;
        case 'float':
          return field(d, 'v') === 'nan' ? NaN : field(d, 'v') === 'inf' ? Infinity : -Infinity;
        case 'bigint':
          return BigIntOf(field(d, 'v'));
        case 'ref':
          if (resolve !== undefined) return resolve(field(d, 'id'), field(d, 'type'), field(d, 'call') === true);
          return freeze(create(null));
        default:
          return freeze(create(null));
      }
    };
    return build(parse(text));
  };

  /** What a thrown value says, as JSON: `{"name", "message"}` for an error-like object, else `{"thrown": <plain data>}`. */
  const describe = (error) => {
    if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
      const name = readData(error, 'name');
      const message = readData(error, 'message');
      if (typeof name === 'string' || typeof message === 'string')
        return (
          '{"name":' +
          (typeof name === 'string' ? stringify(name) : 'null') +
          ',"message":' +
          stringify(typeof message === 'string' ? message : '') +
          '}'
        );
    }
    return '{"thrown":' + stringify(encode(error)) + '}';
  };

  // The solution's values the judge holds references to, by number: a prototype-less table nothing else can reach.
  const refs = create(null);
  let nextRef = 0;
  const refer = (value) => {
    const id = nextRef++;
    refs[id] = value;
    return '{"$":"ref","id":' + id + ',"type":' + stringify(typeName(value)) + (typeof value === 'function' ? ',"call":true' : '') + '}';
  };
  const lookupRef = (id) => refs[id];

  /**
   * Calls `f` with the arguments in `argsText` (plain data; references resolve to the solution's values) and returns
   * `{"value": <plain data>}` or `{"error": <describe>}` as JSON. With `withRefs`, what is not plain data in the result
   * is kept as a reference; otherwise it is written as opaque (a `call` test compares on the host).
   */
  const invoke = (f, argsText, withRefs) => {
    let value;
    try {
      value = apply(f, undefined, argsText === '' ? [] : decode(argsText, lookupRef));
    } catch (error) {
      return '{"error":' + describe(error) + '}';
    }
    return '{"value":' + stringify(encode(value, withRefs ? refer : undefined)) + '}';
  };
  const invokeRef = (id, argsText) =>
    id in refs ? invoke(refs[id], argsText, true) : '{"error":{"name":"ReferenceError","message":"no such value"}}';

  return freeze({ __proto__: null, encode, decode, invoke, invokeRef, describe, typeName, refer });
});
