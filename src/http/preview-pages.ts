import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { endpointPath, ROUTES } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { SiteContext } from './route-types.js';
import type { SendGate } from './send-gate.js';
import { headList, sendBytes } from './send-answer.js';

// The preview's own pages, outside the reference's URL space: `/` links the API and its OpenAPI
// document, and `/openapi.json` is the site's own file. Everything else goes to the API handler.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface PreviewSite {
  /** The site directory, whose openapi.json is sent. */
  readonly dir: string;
  /** The site being served now (waits until it is ready). */
  readonly context: () => Promise<SiteContext>;
  /** The server's send gate (send-gate.ts): a page is read and sent only once its connection can take it. */
  readonly gate?: SendGate | undefined;
}

const OPENAPI_PATH = `/${ROUTES.extras.openapi}`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The index page: where the API is, its OpenAPI document, and where its links point. */
export function indexPage(context: SiteContext): string {
  const api = escapeHtml(escapeUriPath(endpointPath(context.spec.mount)));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cities-api preview</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><h1>cities-api preview</h1>
<p>${context.index.count} cities.</p>
<ul>
<li><a href="${api}">${api}</a>: the API (a browsable page in a browser; <a href="${api}?${ROUTES.param.format}=${ROUTES.format.json}">JSON</a>)</li>
<li><a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>: its OpenAPI document</li>
</ul>
<p>Links in the answers point at <code>${escapeHtml(context.spec.baseUrl)}</code>.</p>
<p><small>This page and ${OPENAPI_PATH} are the preview's own: the service answers neither (<code>serve --no-preview-pages</code>).</small></p>
</body></html>
`;
}

/** Whether the target's path (before any `?`) is `path`: checked in place, every request passes here. */
function hasPath(target: string, path: string): boolean {
  return target.startsWith(path) && (target.length === path.length || target.charCodeAt(path.length) === 63);
}

/** `handler`, with GET and HEAD of `/` and `/openapi.json` answered by the preview. */
export function withPreviewPages(handler: Handler, site: PreviewSite): Handler {
  return (req, res) => {
    const url = req.url ?? '';
    const method = req.method ?? '';
    const path = hasPath(url, OPENAPI_PATH)
      ? OPENAPI_PATH
      : hasPath(url, ROUTES.preview.index)
        ? ROUTES.preview.index
        : undefined;
    if (!path || !(ROUTES.fileMethods as readonly string[]).includes(method)) return handler(req, res);
    // Behind the gate as the API's answers: else a client pipelining these without reading had each read and held.
    const answer = () =>
      void (async () => {
        const [type, body] =
          path === OPENAPI_PATH
            ? [ROUTES.contentType.json, await readFile(join(site.dir, ROUTES.extras.openapi))]
            : [ROUTES.contentType.html, Buffer.from(indexPage(await site.context()))];
        const head = headList({ ...ROUTES.djangoHeaders, [ROUTES.header.contentType]: type }, body.length);
        sendBytes(res, 200, head, method === 'HEAD' ? undefined : body, site.gate);
      })().catch(() => handler(req, res));
    if (site.gate) site.gate.admit(res, answer);
    else answer();
  };
}
