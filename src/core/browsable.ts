import { utf8, type Bytes } from './bytes.js';
import { escapeHtml, prettyParts } from './pretty-json.js';
import { ROUTES } from './route-table.js';

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
  readonly pageSize?: string | undefined;
}

const REASONS: Readonly<Record<number, string>> = {
  200: 'OK', 201: 'Created', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 406: 'Not Acceptable', 413: 'Request Entity Too Large', 415: 'Unsupported Media Type',
};


function orderingOptions(selected: string | undefined): string {
  const values = ['', ...ROUTES.orderingFields.flatMap((f) => [f, `${ROUTES.descending}${f}`])];
  return values
    .map((v) => `<option value="${v}"${v === (selected ?? '') ? ' selected' : ''}>${v ? escapeHtml(v) : 'default (top first, then name_en)'}</option>`)
    .join('');
}

/** The page in parts: the answer's JSON pretty-printed (escaped, URLs linked) part by part, never whole. */
export function* browsablePage(answer: BrowsableAnswer): Generator<Bytes> {
  const headers = Object.entries(answer.headers).map(([k, v]) => `<b>${escapeHtml(k)}:</b> ${escapeHtml(v)}`).join('\n');
  const path = answer.target.split('?')[0]!;
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
pre{background:#fff;border:1px solid #ddd;padding:1em;overflow:auto;white-space:pre-wrap;word-break:break-word}
.request{font-family:ui-monospace,monospace;background:#e8eeee;padding:.4em .7em}
a{color:#1a5fb4}
</style>
</head>
<body>
<header>cities-api</header>
<main>
<h1>City List</h1>
<form method="get" action="${escapeHtml(path)}" id="listing">
<label>Ordering <select name="${ROUTES.param.ordering}">${orderingOptions(answer.ordering)}</select></label>
<label>Page size <input name="${ROUTES.param.pageSize}" type="number" min="1" placeholder="10" value="${escapeHtml(answer.pageSize ?? '')}"></label>
<button type="submit">Show</button>
</form>
<p class="request"><b>${escapeHtml(answer.method)}</b> ${escapeHtml(answer.target)}</p>
<pre class="response"><b>HTTP ${answer.status} ${REASONS[answer.status] ?? ''}</b>
${headers}

`);
  yield* prettyParts(answer.json, 4, 'html');
  yield utf8(`</pre>
</main>
<script>
document.getElementById('listing').addEventListener('submit', function () {
  for (const el of this.elements) if (el.name && !el.value) el.disabled = true;
});
</script>
</body>
</html>
`);
}
