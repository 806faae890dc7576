import { describe, expect, it } from 'vitest';
import { displayedPages } from '../src/core/browsable.js';
import { orderingPicker, orderingTerms } from '../src/core/browsable-forms.js';

// The paginator shows the page numbers DRF 3.14 shows (rest_framework.pagination.
// _get_displayed_page_numbers, values printed by /usr/bin/python3 with Debian's DRF).
describe('displayed page numbers, as DRF', () => {
  it.each([
    [1, 1, [1]],
    [1, 3, [1, 2, 3]],
    [3, 6, [1, 2, 3, 4, 5, 6]],
    [2, 6, [1, 2, 3, null, 6]],
    [1, 10, [1, 2, 3, null, 10]],
    [4, 10, [1, 2, 3, 4, 5, null, 10]],
    [5, 10, [1, null, 4, 5, 6, null, 10]],
    [7, 10, [1, null, 6, 7, 8, 9, 10]],
    [10, 10, [1, null, 8, 9, 10]],
    [6, 100, [1, null, 5, 6, 7, null, 100]],
  ])('page %i of %i', (current, last, shown) => expect(displayedPages(current, last)).toEqual(shown));
});

describe('the ordering picker: a select per term, one more than picked, at least three', () => {
  it.each([
    ['none', undefined, ['', '', '']],
    ['one field', '-name_en', ['-name_en', '', '']],
    [
      'three fields, spaces stripped as DRF strips them',
      'name_fr, -name_de ,name_it',
      ['name_fr', '-name_de', 'name_it', ''],
    ],
  ])('%s', (_, ordering, selected) => {
    const html = orderingPicker(ordering);
    const selects = [...html.matchAll(/<select[^>]*>(.*?)<\/select>/g)].map(
      (m) => /<option value="([^"]*)" selected>/.exec(m[1]!)?.[1] ?? '',
    );
    expect(selects).toEqual(selected);
    expect(orderingTerms(ordering)).toEqual(selected.filter(Boolean));
  });
});
