// The judge's prelude (see src/sandbox/runInQuickJs.ts): a QuickJS context of its own runtime that runs the tests'
// assertion snippets and never the solution's code. A name the tests use that the judge lacks (`square`) is looked
// up in the solution's context by the host: plain data arrives as a fresh value of this context, a function of the
// solution's as a function that calls it there (its arguments sent as plain data), anything else as an opaque object
// equal only to itself. `assert` and `assertEqual` are this context's own, so nothing the solution defines, replaces
// or pollutes reaches them, and `assertEqual` compares on the host as `call` tests do.
//
// Its completion value is installJudge(makeToolkit, lookup, call, mismatch) -> the judge's toolkit, with the host's
// functions:
//   lookup(name) -> '{"value": <plain data>}' | '{"missing": true}' | '{"error": <describe>}'
//   call(id, argsText) -> '{"value": <plain data>}' | '{"error": <describe>}'
//   mismatch(actualText, expectedText) -> why they differ, or undefined
// eslint-disable-next-line @typescript-eslint/no-unused-expressions -- the script's completion value is what the host gets
(function installJudge(makeToolkit, lookup, call, mismatch) {
  'use strict';
  const toolkit = makeToolkit(false);
  const { defineProperty, freeze, create, setPrototypeOf } = Object;
  const { apply, get, has } = Reflect;
  const { parse, stringify } = JSON;
  const ObjectPrototype = Object.prototype;
  const weakMapGet = WeakMap.prototype.get;
  const weakMapSet = WeakMap.prototype.set;
  const ERRORS = { __proto__: null, Error, TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError };
  const ErrorOf = Error;

  /** The solution's values this context holds, with their number in the solution's reference table and their type. */
  const remotes = new WeakMap();
  const remote = (id, type, callable) => {
    const value = callable
      ? function () {
          return unwrap(call(id, toolkit.encode(apply(Array.prototype.slice, arguments, []), sendable)));
        }
      : freeze(create(null));
    apply(weakMapSet, remotes, [value, { id, type }]);
    return value;
  };
  /** Arguments sent to the solution: plain data, or the solution's own values handed back. */
  const sendable = (value) => {
    const known = apply(weakMapGet, remotes, [value]);
    if (known === undefined) throw new TypeError('only plain data and values of the solution can be passed to the solution');
    return '{"$":"ref","id":' + known.id + '}';
  };
  /** For assertEqual: a value of the solution that is not plain data, or one made here, equals nothing. */
  const compared = (value) => {
    const known = apply(weakMapGet, remotes, [value]);
    return '{"$":"opaque","type":' + stringify(known === undefined ? toolkit.typeName(value) : known.type) + '}';
  };

  const rebuilt = (described) => {
    if ('thrown' in described) return toolkit.decode(described.thrown, remote);
    const Kind = typeof described.name === 'string' && described.name in ERRORS ? ERRORS[described.name] : ErrorOf;
    const error = new Kind(described.message);
    if (typeof described.name === 'string' && Kind === ErrorOf && described.name !== 'Error')
      defineProperty(error, 'name', { value: described.name, writable: true, configurable: true });
    return error;
  };
  const unwrap = (replyText) => {
    const reply = parse(replyText);
    if ('error' in reply) throw rebuilt(reply.error);
    return toolkit.decode(reply.value, remote);
  };

  const fallback = new Proxy(ObjectPrototype, {
    get(target, key, receiver) {
      if (typeof key !== 'string' || has(target, key)) return get(target, key, receiver);
      const reply = parse(lookup(key));
      if ('missing' in reply) throw new ReferenceError("'" + key + "' is not defined");
      if ('error' in reply) throw rebuilt(reply.error);
      return toolkit.decode(reply.value, remote);
    },
  });
  setPrototypeOf(globalThis, fallback);

  const assert = function assert(condition, message) {
    if (!condition) throw new ErrorOf(message === undefined ? 'assertion failed' : String(message));
  };
  const assertEqual = function assertEqual(actual, expected, message) {
    const why = mismatch(toolkit.encode(actual, compared), toolkit.encode(expected, compared));
    if (why !== undefined) throw new ErrorOf((message === undefined ? '' : String(message) + ': ') + why);
  };
  defineProperty(globalThis, 'assert', { value: assert, writable: true, configurable: true });
  defineProperty(globalThis, 'assertEqual', { value: assertEqual, writable: true, configurable: true });
  return toolkit;
});
