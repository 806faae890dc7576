import { optionsMetadata } from './metadata.js';
import { escapeHtml } from './pretty-json.js';
import { ROUTES } from './route-table.js';

// The browsable page's forms: the ordering picker (any number of fields, each ascending or
// descending, as `ordering=a,-b` takes them) and, on a server that accepts POST, DRF's POST
// form in its two tabs, "HTML form" (a field per writable city field) and "Raw data" (a media
// type and the body as text). DRF submits them from the browser; here the token is sent too.

/** The Raw data form's media type field, named for the header it sets (as DRF's ajax-form.js reads it). */
const CONTENT_TYPE = ROUTES.header.contentType.toLowerCase();

/** The most fields an ordering can be picked by (one per name field). */
const MAX_TERMS = ROUTES.orderingFields.length;

/** `Ordering`: the parameter's name, as a heading. */
const ORDERING_LABEL = ROUTES.param.ordering[0]!.toUpperCase() + ROUTES.param.ordering.slice(1);

/** The terms of an `ordering` value, as DRF's OrderingFilter splits it (commas, spaces stripped). */
export function orderingTerms(ordering: string | undefined): string[] {
  return (ordering ?? '')
    .split(',')
    .map((term) => term.trim())
    .filter(Boolean);
}

function termOptions(selected: string, first: boolean): string {
  const values = ['', ...ROUTES.orderingFields.flatMap((f) => [f, `${ROUTES.descending}${f}`])];
  const none = first ? 'default (top first, then name_en)' : '(none)';
  return values
    .map((v) => `<option value="${v}"${v === selected ? ' selected' : ''}>${v ? escapeHtml(v) : none}</option>`)
    .join('');
}

/**
 * The ordering picker: a select per term (one more than the current ordering has, at least
 * three), joined by the page's script into the one `ordering` parameter.
 */
export function orderingPicker(ordering: string | undefined): string {
  const terms = orderingTerms(ordering);
  const count = Math.min(MAX_TERMS, Math.max(3, terms.length + 1));
  const selects = Array.from({ length: count }, (_, i) => {
    // The first term is the parameter, as DRF's ordering filter heads it; the others follow it.
    const label = i === 0 ? ORDERING_LABEL : 'then by';
    return `<label>${label} <select class="ordering-term" aria-label="${i === 0 ? 'order by' : `then by (${i + 1})`}">${termOptions(terms[i] ?? '', i === 0)}</select></label>`;
  });
  return `<fieldset class="ordering-picker"><legend>${ORDERING_LABEL}</legend>${selects.join('')}<input type="hidden" name="${ROUTES.param.ordering}" value="${escapeHtml(ordering ?? '')}"></fieldset>`;
}

interface FieldMeta {
  readonly type: string;
  readonly required: boolean;
  readonly read_only: boolean;
  readonly label: string;
  readonly max_length?: number;
  readonly min_value?: number;
  readonly max_value?: number;
  readonly decimal_places?: number;
}

/** The fields a POST may set, as OPTIONS describes them. */
function writableFields(): [string, FieldMeta][] {
  const { actions } = optionsMetadata() as { actions: { POST: Record<string, FieldMeta> } };
  return Object.entries(actions.POST).filter(([, f]) => !f.read_only);
}

function fieldInput(name: string, f: FieldMeta): string {
  const id = `post-${name}`;
  const common = `id="${id}" name="${name}"`;
  const input =
    f.type === 'boolean'
      ? `<input ${common} type="checkbox" value="true">`
      : f.type === 'decimal'
        ? `<input ${common} type="number" step="${10 ** -(f.decimal_places ?? 0)}" min="${f.min_value}" max="${f.max_value}">`
        : `<input ${common} type="text"${f.max_length ? ` maxlength="${f.max_length}"` : ''}${f.required ? ' required' : ''}>`;
  return `<div class="field"><label for="${id}">${escapeHtml(f.label)}</label>${input}</div>`;
}

/** The raw body DRF's "Raw data" tab starts with: an unbound serializer's data (its writable fields' initial values), indented by 4. */
function initialContent(): string {
  const initial = (f: FieldMeta) => (f.type === 'boolean' ? false : f.type === 'decimal' ? null : '');
  return JSON.stringify(Object.fromEntries(writableFields().map(([name, f]) => [name, initial(f)])), null, 4);
}

/** DRF's POST form, its two tabs, and the token field the server needs (sent as `Authorization: Token ...`). */
export function postForms(action: string): string {
  const { parses } = optionsMetadata() as { parses: string[] };
  const media = parses.map((m) => `<option value="${m}">${m}</option>`).join('');
  const post = `<button type="submit" title="Make a POST request on the City List resource">POST</button>`;
  return `<section class="post" aria-label="POST">
<label class="token">Token <input id="post-token" type="password" autocomplete="off" placeholder="CITIES_API_TOKEN"></label>
<div class="tabs" role="tablist"><button type="button" role="tab" aria-selected="true" data-tab="post-object-form">HTML form</button><button type="button" role="tab" aria-selected="false" data-tab="post-generic-content-form">Raw data</button></div>
<form id="post-object-form" class="tab-pane" action="${escapeHtml(action)}" method="POST" enctype="${ROUTES.mediaType.multipart}" novalidate>
${writableFields()
  .map(([name, f]) => fieldInput(name, f))
  .join('\n')}
${post}
</form>
<form id="post-generic-content-form" class="tab-pane" action="${escapeHtml(action)}" method="POST" hidden>
<div class="field"><label for="post-media-type">Media type</label><select id="post-media-type" data-override="${CONTENT_TYPE}">${media}</select></div>
<div class="field"><label for="post-content">Content</label><textarea id="post-content" data-override="content" rows="10">${escapeHtml(initialContent())}</textarea></div>
${post}
</form>
</section>`;
}

/** The script of the POST forms: tabs, and each form sent with the token, the answer (this page) shown as DRF's ajax-form.js shows it. */
export const POST_SCRIPT = `
for (const tab of document.querySelectorAll('.tabs [data-tab]')) tab.addEventListener('click', function () {
  for (const other of document.querySelectorAll('.tabs [data-tab]')) {
    other.setAttribute('aria-selected', String(other === tab));
    document.getElementById(other.dataset.tab).hidden = other !== tab;
  }
});
for (const form of document.querySelectorAll('form[method=POST]')) form.addEventListener('submit', async function (event) {
  event.preventDefault();
  const headers = { Accept: '${ROUTES.mediaType.html}; q=1.0, */*' };
  const token = document.getElementById('post-token').value;
  if (token) headers.Authorization = 'Token ' + token;
  let body;
  const type = form.querySelector('[data-override=${CONTENT_TYPE}]');
  if (type) {
    headers['${ROUTES.header.contentType}'] = type.value;
    body = form.querySelector('[data-override=content]').value;
    if (type.value === '${ROUTES.mediaType.multipart}') {
      // As DRF's ajax-form.js: the boundary is the body's first line that looks like one (RFC 2046), lines end in CRLF.
      const boundary = /^--([0-9A-Z'()+_,\\-./:=? ]{0,69}[0-9A-Z'()+_,\\-./:=?])\\s*?$/im.exec(body);
      if (boundary) headers['${ROUTES.header.contentType}'] += '; boundary="' + boundary[1] + '"';
      body = body.replace(/\\r?\\n/g, '\\r\\n');
    }
  } else body = new FormData(form);
  const res = await fetch(form.getAttribute('action'), { method: 'POST', headers: headers, body: body });
  const text = await res.text();
  if ((res.headers.get('${ROUTES.header.contentType}') || '').startsWith('${ROUTES.mediaType.html}')) {
    document.open();
    document.write(text);
    document.close();
  } else location.href = form.getAttribute('action');
});
`;
