import { utf8, type Bytes } from './bytes.js';
import { escapeHtml, prettyParts } from './pretty-json.js';
import { ROUTES } from './route-table.js';
import { withParam, type QueryPair } from './query-string.js';
import { orderingPicker, POST_SCRIPT, postForms } from './browsable-forms.js';

// The browsable page (DRF's `format=api`, and what browsers get): the same answer as JSON,
// pretty-printed, with clickable links and a small form for ordering and page size.

export interface BrowsableAnswer {
  readonly method: string;
  /** The request's path and query, as received. */
  readonly target: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON body the API would send, in parts. */
  readonly json: Iterable<Bytes>;
  /** Values to preselect in the form. */
  readonly ordering?: string | undefined;
  /** The server accepts POST (`--writable`): the page shows DRF's POST form. */
  readonly writable?: boolean | undefined;
  readonly pageSize?: string | undefined;
  /** The request's query pairs, from which the page's own links are made. */
  readonly pairs?: readonly QueryPair[] | undefined;
  /** The page shown and how many there are, for the paginator (a listing answered 200). */
  readonly pager?: { readonly number: number; readonly pages: number } | undefined;
}

const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
};

/**
 * DRF's displayed page numbers (pagination._get_displayed_page_numbers): all of them up to 5,
 * else the first, the last, the current one and its neighbours, null where some are left out.
 */
export function displayedPages(current: number, last: number): (number | null)[] {
  if (last <= 5) return Array.from({ length: last }, (_, i) => i + 1);
  const included = new Set([1, current - 1, current, current + 1, last]);
  if (current <= 4) for (const n of [2, 3]) included.add(n);
  if (current >= last - 3) for (const n of [last - 1, last - 2]) included.add(n);
  const shown: (number | null)[] = [...included].filter((n) => n > 0 && n <= last).sort((a, b) => a - b);
  if (current > 4) shown.splice(1, 0, null);
  if (current < last - 3) shown.splice(shown.length - 1, 0, null);
  return shown;
}

/** A link of the page: its path with the request's query, one parameter set (or removed), and no empty parameter. */
function pageLink(path: string, pairs: readonly QueryPair[], name: string, value: string | null): string {
  const query = withParam(
    pairs.filter(([, v]) => v !== ''),
    name,
    value,
  );
  return escapeHtml(`${path}${query ? `?${query}` : ''}`);
}

/** DRF's paginator: first, previous, the displayed page numbers, next, last. */
function paginator(
  path: string,
  pairs: readonly QueryPair[],
  { number, pages }: { number: number; pages: number },
): string {
  if (pages <= 1) return '';
  const to = (n: number) => pageLink(path, pairs, ROUTES.param.page, n === 1 ? null : String(n));
  const item = (label: string, n: number, rel = '') =>
    n < 1 || n > pages || n === number ? `<span class="off">${label}</span>` : `<a href="${to(n)}"${rel}>${label}</a>`;
  const numbers = displayedPages(number, pages).map((n) =>
    n === null
      ? '<span class="gap">…</span>'
      : n === number
        ? `<span class="current" aria-current=page>${n}</span>`
        : `<a href="${to(n)}">${n}</a>`,
  );
  return `<nav class="pager" aria-label="pages">${[item('« first', 1), item('‹ previous', number - 1, ' rel="prev"'), ...numbers, item('next ›', number + 1, ' rel="next"'), item('last »', pages)].join('\n')}</nav>`;
}

/** The same request in another format: json (the API's bytes) or api (this page). */
function formatSwitch(path: string, pairs: readonly QueryPair[]): string {
  const links = Object.values(ROUTES.format).map(
    (f) => `<a href="${pageLink(path, pairs, ROUTES.param.format, f)}">${f}</a>`,
  );
  return `<span class="formats">GET as ${links.join(' ')}</span>`;
}

/** The page in parts: the answer's JSON pretty-printed (escaped, URLs linked) part by part, never whole. */
export function* browsablePage(answer: BrowsableAnswer): Generator<Bytes> {
  const headers = Object.entries(answer.headers)
    .map(([k, v]) => `<b>${escapeHtml(k)}:</b> ${escapeHtml(v)}`)
    .join('\n');
  const path = answer.target.split('?')[0]!;
  const pairs = answer.pairs ?? [];
  const pager = answer.pager ? paginator(path, pairs, answer.pager) : '';
  yield utf8(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="robots" content="NONE,NOARCHIVE">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>City List</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#f6f6f4}
header{background:#2c5d63;color:#fff;padding:.7em 1.2em;font-weight:600}
main{max-width:60em;margin:1.2em auto;padding:0 1em}
form{display:flex;flex-wrap:wrap;gap:.6em;align-items:end;margin:0 0 1em}
label{display:flex;flex-direction:column;font-size:.85em}
[hidden]{display:none!important}
fieldset{display:flex;flex-wrap:wrap;gap:.6em;border:0;padding:0;margin:0}
fieldset legend{position:absolute;left:-9999px}
.post{background:#fff;border:1px solid #ddd;padding:1em;margin:1em 0}
.post .field{display:grid;grid-template-columns:10em 1fr;gap:.2em .8em;margin:.3em 0;align-items:center}
.post textarea{font-family:ui-monospace,monospace;width:100%}
.tabs{margin:.8em 0}
.tabs [aria-selected=true]{background:#2c5d63;color:#fff}
pre{background:#fff;border:1px solid #ddd;padding:1em;overflow:auto;white-space:pre-wrap;word-break:break-word}
.request{font-family:ui-monospace,monospace;background:#e8eeee;padding:.4em .7em}
a{color:#1a5fb4}
.bar{display:flex;flex-wrap:wrap;gap:.8em;align-items:center;justify-content:space-between;margin:0 0 .6em}
.pager{display:flex;flex-wrap:wrap;gap:.25em}
.pager a,.pager span{padding:.15em .55em;border:1px solid #ccd;border-radius:3px;background:#fff;text-decoration:none}
.pager .current{background:#2c5d63;color:#fff;border-color:#2c5d63}
.pager .off{color:#999}
.pager .gap{border:0;background:none}
.formats a{margin-left:.3em}
</style>
</head>
<body>
<header>cities-api</header>
<main>
<h1>City List</h1>
<form method="get" action="${escapeHtml(path)}" id="listing">
${orderingPicker(answer.ordering)}
<label>Page size <input name="${ROUTES.param.pageSize}" type="number" min="1" placeholder="10" value="${escapeHtml(answer.pageSize ?? '')}"></label>
<button type="submit">Show</button>
<button type="button" id="options">OPTIONS</button>
</form>
<div class="bar">${pager}${formatSwitch(path, pairs)}</div>
${answer.writable ? postForms(answer.target) : ''}
<p class="request"><b>${escapeHtml(answer.method)}</b> ${escapeHtml(answer.target)}</p>
<pre class="response"><b>HTTP ${answer.status} ${REASONS[answer.status] ?? ''}</b>
${headers}

`);
  yield* prettyParts(answer.json, 4, 'html');
  yield utf8(`</pre>
</main>
<script>
// The form's query without its empty fields (and no bare '?' when all are empty).
document.getElementById('listing').addEventListener('submit', function (event) {
  event.preventDefault();
  // The ordering's picked fields, in order, as one parameter.
  const terms = [...this.querySelectorAll('.ordering-term')].map(function (s) { return s.value; }).filter(Boolean);
  this.elements['${ROUTES.param.ordering}'].value = terms.join(',');
  const query = new URLSearchParams();
  for (const el of this.elements) if (el.name && el.value) query.append(el.name, el.value);
  location.href = this.getAttribute('action') + (query.size ? '?' + query : '');
});
// OPTIONS: the endpoint's description, shown in place of the answer.
document.getElementById('options').addEventListener('click', async function () {
  const res = await fetch(location.pathname, { method: 'OPTIONS', headers: { Accept: '${ROUTES.mediaType.json}; indent=4' } });
  document.querySelector('.request').textContent = 'OPTIONS ' + location.pathname;
  const head = [${[ROUTES.header.allow, ROUTES.header.contentType, ROUTES.header.vary].map((h) => `'${h}'`).join(', ')}].map(function (h) { return h + ': ' + (res.headers.get(h) || ''); }).join('\\n');
  document.querySelector('pre.response').textContent = 'HTTP ' + res.status + ' ' + res.statusText + '\\n' + head + '\\n\\n' + await res.text();
});${answer.writable ? POST_SCRIPT : ''}
</script>
</body>
</html>
`);
}
