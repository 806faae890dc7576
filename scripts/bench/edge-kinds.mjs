// The query kinds of bench-edge.mjs, each a label and the i-th query (i = 0 the first): distinct
// pages while the list has them, every page number within the list's pages at any count (a page
// past the last is a 404, which measures nothing: at 20k cities 14 of 21 answers of the default
// kind and 16 of 21 of page_size=5000 were).

/** Page `page` (any integer) wrapped into 1..the number of pages of `count` cities by `size`. */
export const pageWithin = (count, size, page) => {
  const pages = Math.max(1, Math.ceil(count / size));
  return ((((page - 1) % pages) + pages) % pages) + 1;
};

/** The query kinds for a dataset of `count` cities. */
export const kinds = (count) => {
  const at = (size, page) => `page_size=${size}&page=${pageWithin(count, size, page)}`;
  return [
    ['covered (a file holds it)', (i) => `ordering=-name_fr&${at(100, i + 1)}`],
    ['default ordering, uncovered', (i) => at(7, Math.floor(count / 14) + 211 * i)],
    ['uncovered page size', (i) => `ordering=name_it&${at(7, Math.floor(count / 7) - 97 * i)}`],
    ['uncovered, descending', (i) => `ordering=-name_ar&${at(20, Math.floor(count / 40) + 13 * i)}`],
    ['multi-field', (i) => `ordering=name_de,-name_en&${at(10, Math.floor(count / 20) + 31 * i)}`],
    ['multi-field, 3 terms', (i) => `ordering=-name_fr,name_ar,-name_en&${at(50, 1 + 7 * i)}`],
    ['page_size=5000, multi-field', (i) => `ordering=-name_it,name_ru&${at(5000, 1 + i)}`],
    ['page_size >= count', (i) => `ordering=${i % 2 ? '-' : ''}name_ru&page_size=${count + i}`],
    ['page_size >= count, default', (i) => `page_size=${count + i}`],
  ];
};

/** The statuses of a kind's answers as the bench prints them: `200`, or each with its count (`200 x5, 404 x16`). */
export const statusesLine = (statuses) => {
  const counts = new Map();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts.size === 1 ? String(statuses[0]) : [...counts].map(([s, n]) => `${s} x${n}`).join(', ');
};
