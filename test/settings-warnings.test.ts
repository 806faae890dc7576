import { describe, expect, it } from 'vitest';
import type { Problem } from '../src/core/errors.js';
import { settingsWarningsOnce } from '../src/app/settings-warnings.js';
import { netlifyLeftOut } from '../src/hosts/netlify.js';

// What a server's builds, one after another, say of the warnings each gives: one of the settings
// alone once per text (a changed text said), one of the data or the site's directory each time.

const misread = (baseUrl: string) => netlifyLeftOut({ baseUrl, host: undefined })!;
const [A, B] = [misread('https://x.example/:v1/api'), misread('https://x.example/a*b')];
const data: Problem = { file: 'cities.json', line: 1, reason: 'ignored unknown key "nickname"' };
const cache: Problem = { file: 'site.stat-cache', reason: 'a directory where a build keeps its stat cache' };

describe("a server's builds: a warning of the settings said once per text, others at each build", () => {
  it.each<[string, Problem[], Problem[]]>([
    ['the same base URL Netlify misreads, at three builds: said at the first', [A, A, A], [A]],
    ['the base URL changed, then back: each text said once', [A, B, A, B], [A, B]],
    ['a warning of the data at each build: said each time', [data, data], [data, data]],
    ["the site directory's stat cache in the way, at each build: said each time", [cache, cache], [cache, cache]],
    ['the settings warning among the others: once, the others each time', [A, data, A, data], [A, data, data]],
  ])('%s', (_, given, said) => {
    const told: Problem[] = [];
    const onWarning = settingsWarningsOnce((warning) => told.push(warning))!;
    for (const warning of given) onWarning(warning);
    expect(told).toEqual(said);
  });

  it('no onWarning given: none made (a build without one says nothing)', () => {
    expect(settingsWarningsOnce(undefined)).toBeUndefined();
  });

  it("netlifyLeftOut's warning is one of the settings alone", () => {
    expect([A.ofSettings, B.ofSettings]).toEqual([true, true]);
  });
});
