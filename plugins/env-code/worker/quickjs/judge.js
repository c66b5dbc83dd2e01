// The judge's prelude (see src/sandbox/runInQuickJs.ts): a QuickJS context of its own runtime that runs the tests'
// assertion snippets and never the solution's code. A name the tests use that the judge lacks (`square`) is looked
// up in the solution's context by the host: plain data arrives as a fresh value of this context, a function of the
// solution's as a function that calls it there (its arguments sent as plain data), anything else as an opaque object
// equal only to itself. `assert` and `assertEqual` are this context's own, so nothing the solution defines, replaces
// or pollutes reaches them, and `assertEqual` compares on the host as `call` tests do.
//
// Only the tests' own code runs here, so this context's JSON and Object serve to read and write plain data (see
// src/sandbox/plainData.ts); the solution's context has the hook-free toolkit (toolkit.js).
//
// Its completion value is installJudge(lookup, call, mismatch), with the host's functions:
//   lookup(name) -> '{"value": <plain data>}' | '{"missing": true}' | '{"error": <described error>}'
//   call(id, argsText) -> '{"value": <plain data>}' | '{"error": <described error>}'
//   mismatch(actualText, expectedText) -> why they differ, or undefined
// eslint-disable-next-line @typescript-eslint/no-unused-expressions -- the script's completion value is what the host gets
(function installJudge(lookup, call, mismatch) {
  'use strict';
  const ERRORS = { __proto__: null, Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError };
  const ObjectPrototype = Object.prototype;

  /** The solution's values this context holds: their number in the solution's reference table, and their type. */
  const remotes = new WeakMap();
  const remote = (id, type, callable) => {
    const value = callable
      ? function () {
          return unwrap(call(id, write([...arguments], sendable)));
        }
      : Object.freeze(Object.create(null));
    remotes.set(value, { id, type });
    return value;
  };

  /** Plain-data text of a value of this context; `other(value)` writes what is not plain data. */
  const write = (value, other) =>
    JSON.stringify(value, (_key, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) return { $: 'float', v: Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf' };
      if (typeof v === 'bigint') return { $: 'bigint', v: String(v) };
      if (typeof v === 'function' || typeof v === 'symbol') return other(v);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      const proto = Object.getPrototypeOf(v);
      if (remotes.has(v) || (proto !== ObjectPrototype && proto !== null)) return other(v);
      return { $: 'dict', v: Object.entries(v).filter(([, item]) => item !== undefined) };
    }) ?? 'null';
  /** Arguments sent to the solution: plain data, or the solution's own values handed back. */
  const sendable = (value) => {
    const known = remotes.get(value);
    if (known === undefined || known.id < 0)
      throw new TypeError('only plain data and values of the solution can be passed to the solution');
    return { $: 'ref', id: known.id };
  };
  /** For assertEqual: a value of the solution that is not plain data, or one made here, equals nothing. */
  const compared = (value) => ({ $: 'opaque', type: remotes.get(value)?.type ?? typeof value });

  /** A value of this context from plain-data text; references become functions or opaque objects. */
  const read = (text) =>
    JSON.parse(text, (_key, v) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v) || typeof v.$ !== 'string') return v;
      switch (v.$) {
        case 'dict':
          return Object.fromEntries(v.v);
        case 'tuple':
        case 'set':
        case 'frozenset':
          return v.v;
        case 'float':
          return v.v === 'nan' ? NaN : v.v === 'inf' ? Infinity : -Infinity;
        case 'bigint':
          return BigInt(v.v);
        case 'ref':
          return remote(v.id, v.type, v.call === true);
        default:
          return remote(-1, v.type, false);
      }
    });

  const rebuilt = (described) => {
    if ('thrown' in described) return read(described.thrown);
    const Kind = typeof described.name === 'string' && described.name in ERRORS ? ERRORS[described.name] : Error;
    const error = new Kind(described.message);
    if (typeof described.name === 'string' && Kind === Error && described.name !== 'Error')
      Object.defineProperty(error, 'name', { value: described.name, writable: true, configurable: true });
    return error;
  };
  const unwrap = (replyText) => {
    const reply = JSON.parse(replyText);
    if ('error' in reply) throw rebuilt(reply.error);
    return read(reply.value);
  };

  const fallback = new Proxy(ObjectPrototype, {
    get(target, key, receiver) {
      if (typeof key !== 'string' || Reflect.has(target, key)) return Reflect.get(target, key, receiver);
      const reply = JSON.parse(lookup(key));
      if ('missing' in reply) throw new ReferenceError("'" + key + "' is not defined");
      if ('error' in reply) throw rebuilt(reply.error);
      return read(reply.value);
    },
  });
  Object.setPrototypeOf(globalThis, fallback);

  const assert = function assert(condition, message) {
    if (!condition) throw new Error(message === undefined ? 'assertion failed' : String(message));
  };
  const assertEqual = function assertEqual(actual, expected, message) {
    const why = mismatch(write(actual, compared), write(expected, compared));
    if (why !== undefined) throw new Error((message === undefined ? '' : String(message) + ': ') + why);
  };
  Object.defineProperty(globalThis, 'assert', { value: assert, writable: true, configurable: true });
  Object.defineProperty(globalThis, 'assertEqual', { value: assertEqual, writable: true, configurable: true });
});
