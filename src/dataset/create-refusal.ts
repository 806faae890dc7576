import { wordingOf } from '../core/errors.js';
import { CreateRefused } from '../post/city-store.js';
import { DatasetChanged } from './append-cities.js';
import { LockBusyError } from '../fs/lock.js';

/**
 * What a client is told when its creation failed: a refusal as it is, a busy lock or a dataset
 * changed meanwhile as a 503 to retry (after the lock's wait, `lockWait` ms), anything else (an
 * invalid dataset on disk, a full disk) said in the log in one line and a plain 500 to the client.
 */
export function createRefusal(error: unknown, lockWait: number, log: (line: string) => void): unknown {
  if (error instanceof CreateRefused) return error;
  const retryAfter = Math.max(1, Math.ceil(lockWait / 1000));
  if (error instanceof LockBusyError) {
    log(`POST refused (503): ${wordingOf(error)}`);
    return new CreateRefused(
      503,
      `Another process is updating this data; nothing was written. Try again in ${retryAfter} s.`,
      retryAfter,
    );
  }
  if (error instanceof DatasetChanged) {
    log(`POST refused (503): ${wordingOf(error)}`);
    return new CreateRefused(
      503,
      'The data changed while the city was being added; nothing was written. Try again.',
      1,
    );
  }
  log(`POST failed (500): ${wordingOf(error)}`);
  return new CreateRefused(500, 'A server error occurred.');
}
