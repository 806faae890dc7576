import { describe, expect, it } from 'vitest';
import { RouteMemo, type RememberedRoute } from '../src/http/route-memo.js';
import { JSON_HEADERS } from '../src/http/route-types.js';

type Key = [method: string, accept: string | undefined, target: string];
const planFor = (file: string): RememberedRoute => ({ kind: 'static', file, headers: JSON_HEADERS });
/** A decision made twice for its target: remembered (see 'what the memo keeps'). */
const remember = (
  memo: RouteMemo,
  method: string,
  accept: string | undefined,
  target: string,
  plan: RememberedRoute,
) => {
  memo.offer(method, accept, target, plan);
  memo.offer(method, accept, target, plan);
};

// Requests whose method, Accept or target differ in any way never share a remembered decision.
describe('route memo keys are injective', () => {
  it.each([
    ['Accept absent vs empty', ['GET', undefined, '/cities/'], ['GET', '', '/cities/']],
    ['GET vs HEAD', ['GET', undefined, '/cities/'], ['HEAD', undefined, '/cities/']],
    ['a NUL in the format vs none', ['GET', undefined, '/cities/?format=%00'], ['GET', undefined, '/cities/?format=']],
    ['target and Accept not concatenated', ['GET', 'a', 'b/cities/'], ['GET', 'ab', '/cities/']],
    ['Accept differing in case', ['GET', 'text/html', '/cities/'], ['GET', 'TEXT/HTML', '/cities/']],
  ] as [string, Key, Key][])('%s', (_, a, b) => {
    const memo = new RouteMemo();
    remember(memo, ...a, planFor('a'));
    expect(memo.get(...b)).toBeUndefined();
    remember(memo, ...b, planFor('b'));
    expect([memo.get(...a), memo.get(...b)]).toEqual([planFor('a'), planFor('b')]);
  });
});

describe('what the memo keeps', () => {
  it.each([
    ['a target over 1,024 characters', 'GET', undefined, `/cities/?x=${'a'.repeat(1100)}`, planFor('f')],
    ['an Accept over 512 characters', 'GET', 'a'.repeat(600), '/cities/', planFor('f')],
    [
      'a listing of more than 16 query pairs',
      'GET',
      undefined,
      '/cities/',
      {
        kind: 'listing',
        pairs: Array.from({ length: 17 }, () => ['a', 'b']),
        negotiation: { renderer: 'json', indent: null },
      } as unknown as RememberedRoute,
    ],
  ] as const)('not %s', (_, method, accept, target, plan) => {
    const memo = new RouteMemo();
    remember(memo, method, accept, target, plan);
    expect(memo.get(method, accept, target)).toBeUndefined();
  });

  it.each([
    ['offered once: not remembered (a query asked once)', ['a'], 'a', false],
    ['offered twice: remembered', ['a', 'a'], 'a', true],
    ['another target offered between: still remembered the second time', ['a', 'b', 'a'], 'a', true],
    ['the other target, offered once, is not', ['a', 'b', 'a'], 'b', false],
  ])('%s', (_, offered, asked, kept) => {
    const memo = new RouteMemo();
    for (const target of offered) memo.offer('GET', undefined, `/cities/?${target}`, planFor(target));
    expect(memo.get('GET', undefined, `/cities/?${asked}`) !== undefined).toBe(kept);
  });

  it.each([
    ['a target the first time, then again, then again', ['a', 'a', 'a'], ['first', 'again', 'first']],
    ['two targets interleaved', ['a', 'b', 'a', 'b'], ['first', 'first', 'again', 'again']],
    ['a target over 1,024 characters: never kept', [`x${'a'.repeat(1100)}`], ['never']],
  ])('what offer() says of each offer: %s', (_, offered, said) => {
    const memo = new RouteMemo();
    expect(offered.map((target) => memo.offer('GET', undefined, `/cities/?${target}`, planFor(target)))).toEqual(said);
  });

  it('a flood of targets asked once leaves the decisions asked often remembered', () => {
    const memo = new RouteMemo();
    remember(memo, 'GET', undefined, '/cities/?page=2', planFor('2'));
    for (let i = 0; i < 50_000; i++) memo.offer('GET', undefined, `/cities/?page=2&n=${i}`, planFor('n'));
    expect(memo.get('GET', undefined, '/cities/?page=2')).toEqual(planFor('2'));
    expect(memo.get('GET', undefined, '/cities/?page=2&n=49999')).toBeUndefined();
  });

  it('at most 2,048 plans: past that it starts afresh, then keeps the newest', () => {
    const memo = new RouteMemo();
    for (let i = 0; i < 2048; i++) remember(memo, 'GET', undefined, `/cities/?page=${i}`, planFor(String(i)));
    expect(memo.get('GET', undefined, '/cities/?page=0')).toEqual(planFor('0'));
    remember(memo, 'GET', undefined, '/cities/?page=new', planFor('new'));
    expect([memo.get('GET', undefined, '/cities/?page=0'), memo.get('GET', undefined, '/cities/?page=new')]).toEqual([
      undefined,
      planFor('new'),
    ]);
  });
});
