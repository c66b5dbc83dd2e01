import { describe, expect, test } from '@jest/globals';
import { BindingLedger } from '../src/di/BindingLedger.js';
import { createToken } from '../src/di/Token.js';

// Two loaded copies of a package (its sources and its dist) each create the token: two objects, one Symbol.for id.
const info = { label: 'orchestra', named: true };
const fromSources = createToken<unknown>('LedgerTestOrchestra', info);
const fromDist = createToken<unknown>('LedgerTestOrchestra', info);

describe('BindingLedger', () => {
  test('a name bound through one copy of a token is found through the other', () => {
    expect(fromSources).not.toBe(fromDist);
    const ledger = new BindingLedger();
    ledger.record({ key: fromDist, name: 'code', plugin: 'preset-code' });
    expect(ledger.namesOf(fromSources)).toEqual(['code']);
    expect(ledger.bindingsOf(fromSources, 'code').map((r) => r.plugin)).toEqual(['preset-code']);
  });

  test('the same name bound through both copies is a duplicate', () => {
    const ledger = new BindingLedger();
    ledger.record({ key: fromDist, name: 'code', plugin: 'a' });
    expect(() => ledger.record({ key: fromSources, name: 'code', plugin: 'b' })).toThrow(
      /registered twice: by plugin "a" and by plugin "b"/,
    );
  });

  test('tokens of different names stay apart', () => {
    const ledger = new BindingLedger();
    ledger.record({ key: fromDist, name: 'code', plugin: 'a' });
    expect(ledger.namesOf(createToken<unknown>('LedgerTestOther', info))).toEqual([]);
  });
});
