import { createHash, timingSafeEqual } from 'node:crypto';

export interface AuthFailure {
  readonly status: 401;
  readonly detail: string;
}

/**
 * DRF TokenAuthentication on `Authorization: Token <key>`, compared in constant time (both sides
 * hashed first, so neither length nor content leaks through timing). Null when authenticated.
 */
export function checkToken(header: string | undefined, token: string): AuthFailure | null {
  const parts = (header ?? '').split(/\s+/).filter(Boolean);
  if (!parts.length || parts[0]!.toLowerCase() !== 'token') return { status: 401, detail: 'Authentication credentials were not provided.' };
  if (parts.length === 1) return { status: 401, detail: 'Invalid token header. No credentials provided.' };
  if (parts.length > 2) return { status: 401, detail: 'Invalid token header. Token string should not contain spaces.' };
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(parts[1]!), digest(token)) ? null : { status: 401, detail: 'Invalid token.' };
}
