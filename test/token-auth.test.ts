import { timingSafeEqual as realEqual } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { checkToken as checkWith, tokenProblems } from '../src/http/token-auth.js';

// checkToken's comparison is node's timingSafeEqual, wrapped here to see what it is given. (It was
// node:crypto mocked: unit files share their modules, and a run that had loaded token-auth before
// gave it the real one: 10 of these cases failed now and then.)
const timingSafeEqual = vi.fn(realEqual);
const checkToken = (header: string | undefined, token: string) => checkWith(header, token, timingSafeEqual);

const TOKEN = 's3cret-token-0123456789';
/** A header as node hands it over: each byte received as one latin-1 character (here, text sent as UTF-8). */
const sent = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

describe('the POST token is compared in constant time, whatever the key sent', () => {
  it.each([
    ['the token', `Token ${TOKEN}`, null],
    ['the token, scheme in lower case', `token ${TOKEN}`, null],
    ['a shorter key', 'Token s3cret', 'Invalid token.'],
    ['a one-character key', 'Token x', 'Invalid token.'],
    ['a longer key', `Token ${TOKEN}0`, 'Invalid token.'],
    ['the same length, last character wrong', `Token ${TOKEN.slice(0, -1)}8`, 'Invalid token.'],
    ['non-ASCII, sent as UTF-8', sent('Token clé-ü-字'), 'Invalid token.'],
    [
      'the token, then U+00A0 (not ASCII whitespace: part of the key, as DRF splits bytes)',
      sent(`Token ${TOKEN}\u00a0`),
      'Invalid token.',
    ],
    ['the token after a tab and two spaces (ASCII whitespace separates)', `Token\t  ${TOKEN}`, null],
    ['the token, then a form feed', `Token ${TOKEN}\f`, null],
  ])('%s → %s', (_, header, detail) => {
    timingSafeEqual.mockClear();
    expect(checkToken(header, TOKEN)).toEqual(detail === null ? null : { status: 401, detail });
    // One comparison, of two SHA-256 digests: equal lengths, so neither the key's length nor its content shows in the time taken.
    expect(timingSafeEqual.mock.calls.map(([a, b]) => [a.byteLength, b.byteLength])).toEqual([[32, 32]]);
  });

  it.each([
    ['no header', undefined, 'Authentication credentials were not provided.'],
    ['another scheme', `Bearer ${TOKEN}`, 'Authentication credentials were not provided.'],
    ['no key', 'Token', 'Invalid token header. No credentials provided.'],
    ['a key with a space', `Token ${TOKEN} x`, 'Invalid token header. Token string should not contain spaces.'],
  ])('%s → 401 %s, without comparing', (_, header, detail) => {
    timingSafeEqual.mockClear();
    expect(checkToken(header, TOKEN)).toEqual({ status: 401, detail });
    expect(timingSafeEqual).not.toHaveBeenCalled();
  });
});

describe('the key is the UTF-8 text of the bytes sent, as DRF decodes it', () => {
  it.each([
    ['a non-ASCII token sent as UTF-8 bytes', 'clé-ü-字', sent('Token clé-ü-字'), null],
    [
      'a non-ASCII token sent as latin-1 bytes (not UTF-8)',
      'clé',
      'Token cl\xe9',
      'Invalid token header. Token string should not contain invalid characters.',
    ],
    [
      'an ASCII token, a stray byte 0xA0 after it',
      TOKEN,
      `Token ${TOKEN}\xa0`,
      'Invalid token header. Token string should not contain invalid characters.',
    ],
  ])('%s', (_, token, header, detail) => {
    expect(checkToken(header, token)).toEqual(detail === null ? null : { status: 401, detail });
  });
});

describe('a token --writable cannot use is refused at start, one many clients cannot send is warned about', () => {
  it.each([
    ['an ASCII token', TOKEN, {}],
    ['a space inside', 'abc def', { error: expect.stringMatching(/^contains " " \(U\+0020\)/) }],
    ['a tab', 'abc\tdef', { error: expect.stringMatching(/^contains "\\t" \(U\+0009\)/) }],
    ['a control character', 'abc\x01', { error: expect.stringMatching(/U\+0001/) }],
    [
      'undecodable bytes from the environment (U+FFFD)',
      'abc\ufffd',
      { error: expect.stringMatching(/not valid UTF-8/) },
    ],
    ['non-ASCII', 'clé', { warning: expect.stringMatching(/^is not ASCII: clients must send its UTF-8 bytes/) }],
    [
      'a no-break space inside (sendable as UTF-8, so only non-ASCII)',
      'a\u00a0b',
      { warning: expect.stringMatching(/^is not ASCII/) },
    ],
  ])('%s', (_, token, expected) => {
    expect(tokenProblems(token)).toEqual(expected);
  });
});
