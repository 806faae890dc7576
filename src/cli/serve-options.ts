import { CitiesApiError } from '../core/errors.js';
import type { OptionSpec } from './option-spec.js';

// Rows of the option table (options.ts): how serve listens and answers.

function parsePort(value: string | number): number {
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) > 65535)
    throw new CitiesApiError(`invalid port "${text}": expected 0-65535`, 2);
  return Number(text);
}

/** An address or host name: an empty one listened on every address and named the server http://:PORT. */
function parseHost(value: string | number): string {
  const text = String(value);
  if (!text.trim())
    throw new CitiesApiError(
      `invalid --host "${text}": expected an address to listen on, e.g. 127.0.0.1, 0.0.0.0 or ::1`,
      2,
    );
  return text;
}

function parseWorkers(value: string | number): number | 'auto' {
  const text = String(value);
  if (text === 'auto') return 'auto';
  if (!/^[1-9]\d{0,3}$/.test(text) || Number(text) > 1024)
    throw new CitiesApiError(`invalid --workers "${text}": expected a whole number from 1 to 1024, or auto`, 2);
  return Number(text);
}

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'port',
    flag: '--port <number>',
    help: 'port to listen on (0: any free port)',
    commands: ['serve'],
    config: 'integer',
    default: 8080,
    parse: parsePort,
  },
  {
    key: 'host',
    flag: '--host <address>',
    help: 'address to listen on',
    commands: ['serve'],
    config: 'string',
    default: '127.0.0.1',
    parse: parseHost,
  },
  {
    key: 'workers',
    flag: '--workers <n>',
    help: 'server processes sharing the port (node:cluster), auto: one per CPU; this process stays the one writer (builds, --watch, POST)',
    commands: ['serve'],
    config: 'integer or "auto"',
    default: 1,
    parse: parseWorkers,
  },
  {
    key: 'writable',
    flag: '--writable',
    help: 'accept POST to create cities (clients send Authorization: Token $CITIES_API_TOKEN)',
    commands: ['serve'],
  },
  {
    key: 'token',
    flag: '$CITIES_API_TOKEN',
    help: 'the key a POST must send with --writable; from the environment only (a flag would show in ps, a config key in the repository)',
    commands: ['serve'],
  },
  {
    key: 'watch',
    flag: '--watch',
    help: 'rebuild and answer from the new data when the dataset file changes',
    commands: ['serve'],
  },
  {
    key: 'failoverOrigin',
    flag: '--failover-origin',
    help: "also answer the site's file paths, as the origin a CDN fails over to when its copy lacks a file (docs/cloudfront.md)",
    commands: ['serve'],
  },
  {
    key: 'quiet',
    flag: '--quiet',
    help: 'print no line per request (by default one per request in the Common Log Format, then the ms it took)',
    commands: ['serve'],
    config: 'boolean',
  },
  {
    key: 'previewPages',
    flag: '--no-preview-pages',
    help: "answer / and /openapi.json with Django's 404, as the reference does, rather than a page linking the API and the site's OpenAPI document",
    commands: ['serve'],
    config: 'boolean',
    default: true,
  },
];
