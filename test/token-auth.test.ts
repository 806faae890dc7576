import type * as Crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

// timingSafeEqual is wrapped (its own behaviour kept) to see what checkToken compares with it.
const { timingSafeEqual } = vi.hoisted(() => ({ timingSafeEqual: vi.fn<typeof Crypto.timingSafeEqual>() }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof Crypto>();
  timingSafeEqual.mockImplementation(crypto.timingSafeEqual);
  return { ...crypto, timingSafeEqual };
});
const { checkToken } = await import('../src/token-auth.js');

const TOKEN = 's3cret-token-0123456789';

describe('the POST token is compared in constant time, whatever the key sent', () => {
  it.each([
    ['the token', `Token ${TOKEN}`, null],
    ['the token, scheme in lower case', `token ${TOKEN}`, null],
    ['a shorter key', 'Token s3cret', 'Invalid token.'],
    ['a one-character key', 'Token x', 'Invalid token.'],
    ['a longer key', `Token ${TOKEN}0`, 'Invalid token.'],
    ['the same length, last character wrong', `Token ${TOKEN.slice(0, -1)}8`, 'Invalid token.'],
    ['non-ASCII', 'Token clé-ü-字', 'Invalid token.'],
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
