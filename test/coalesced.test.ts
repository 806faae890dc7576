import { describe, expect, it } from 'vitest';
import { coalesced } from '../src/app/dataset-watch.js';

// serve --watch's runner (dataset-watch.ts): one rebuild at a time, a burst of changes one more;
// ended() (the server closing) lets none run again and resolves once the one under way has ended.

/** A task whose runs are counted, each held until released. */
function heldTask() {
  const task = { runs: 0, running: false, release: () => {} };
  const run = () => {
    task.runs++;
    task.running = true;
    return new Promise<void>((resolve) => {
      task.release = () => {
        task.running = false;
        resolve();
      };
    });
  };
  return { task, run };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesced', () => {
  it.each<
    [string, number, (ask: ReturnType<typeof coalesced>, task: ReturnType<typeof heldTask>['task']) => Promise<number>]
  >([
    [
      'asked twice while it runs: it runs once more after',
      2,
      async (ask, task) => {
        ask();
        ask();
        ask();
        await tick();
        task.release();
        await tick();
        task.release();
        await tick();
        return task.runs;
      },
    ],
    [
      'ended() while it runs resolves only once the run has ended',
      1,
      async (ask, task) => {
        ask();
        let ended = false;
        const ending = ask.ended().then(() => (ended = true));
        await tick();
        expect(ended).toBe(false);
        task.release();
        await ending;
        expect(task.running).toBe(false);
        return task.runs;
      },
    ],
    [
      'asked again while it runs, then ended(): it does not run again',
      1,
      async (ask, task) => {
        ask();
        ask();
        const ending = ask.ended();
        await tick();
        task.release();
        await tick();
        task.release(); // (a second run's, were there one: else the first's again, a no-op)
        await ending;
        return task.runs;
      },
    ],
    [
      'asked after ended(): it does not run',
      0,
      async (ask, task) => {
        await ask.ended();
        ask();
        await tick();
        return task.runs;
      },
    ],
  ])('%s (runs: %i)', async (_, runs, scenario) => {
    const { task, run } = heldTask();
    expect(await scenario(coalesced(run), task)).toBe(runs);
  });
});
