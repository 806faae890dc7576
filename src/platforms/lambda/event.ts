// The request a payload-2.0 event (API Gateway HTTP API, a function URL) stands for, as the
// web-standard Request the shared fetch handler answers: both Lambda handlers read events so.

/** The fields of a payload-2.0 event the handlers read. */
export interface LambdaEvent {
  readonly rawPath: string;
  readonly rawQueryString?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cookies?: readonly string[];
  readonly body?: string;
  readonly isBase64Encoded?: boolean;
  readonly requestContext: { readonly http: { readonly method: string }; readonly domainName?: string };
}

/** The path and query as the client sent them: a Request's URL would resolve dot segments (`/./cities/`), which the reference answers 404. */
export function targetOf(event: LambdaEvent): string {
  return `${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
}

export function requestOf(event: LambdaEvent): Request {
  const method = event.requestContext.http.method;
  // The function URL's own name, never the client's Host header (which could make the URL invalid: `a@b`); answers use only the path and query.
  const host = validHost(event.requestContext.domainName) ?? 'lambda.invalid';
  const body =
    event.body === undefined || method === 'GET' || method === 'HEAD'
      ? undefined
      : base64OrText(event.body, event.isBase64Encoded);
  return new Request(`https://${host}${targetOf(event)}`, { method, headers: event.headers ?? {}, body });
}

function validHost(name: string | undefined): string | undefined {
  return name && /^[A-Za-z0-9.-]+$/.test(name) ? name : undefined;
}

function base64OrText(body: string, base64 = false): Uint8Array | string {
  return base64 ? Uint8Array.from(atob(body), (c) => c.charCodeAt(0)) : body;
}
