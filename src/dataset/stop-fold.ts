import { CitiesApiError, wordingOf } from '../core/errors.js';
import { LockBusyError } from '../fs/lock.js';
import type { CityLog } from './city-log.js';

/**
 * A writer's fold of its log at its stop (logged-writer.ts close), failed. For the dataset's lock
 * held by another process past lockWait (a build of it, another server), the log is kept for
 * whatever reads the dataset next (build and serve --data fold it first), and said: durable, nothing
 * lost, so no failure of the stop. Returns whether nothing was logged (then nothing is left). Any
 * other failure (a refusal: a logged city's id given to another row of the file) is thrown, the log kept too.
 */
export async function foldFailedAtStop(
  failed: unknown,
  log: CityLog,
  file: string,
  say: (line: string) => void,
): Promise<boolean> {
  if (failed instanceof LockBusyError) {
    // Read without the lock, only to say it.
    const { cities } = await log.read().catch(() => ({ cities: [null] }));
    if (!cities.length) return true;
    const some = cities.length === 1 ? 'the city' : `the ${cities.length} cities`;
    say(
      `warning: ${some} logged in ${log.path} not folded into ${file} at stop (${wordingOf(failed)}): kept there, the next build or serve --data folds them in first`,
    );
    return false;
  }
  const code = failed instanceof CitiesApiError ? failed.exitCode : 1;
  const said = `logged cities not folded into ${file} (they are next time): ${wordingOf(failed)}`;
  throw new CitiesApiError(said, code, [], { cause: failed });
}
