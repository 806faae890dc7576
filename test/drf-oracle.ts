import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { City } from '../src/core/fields.js';

// The real DRF (Debian's python3-djangorestframework on /usr/bin/python3) as a long-lived
// process: a dataset and a batch of requests in, one recorded answer a line out.

export const PYTHON = '/usr/bin/python3';
const MAIN = join(import.meta.dirname, 'drf-reference', 'main.py');

export interface RecordedAnswer {
  readonly status: number;
  /** allow, content-type, vary, location (those present), names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface ReferenceRequest {
  readonly method: string;
  readonly target: string;
  readonly accept?: string | undefined;
}

/** Whether /usr/bin/python3 imports Django and DRF; why not, otherwise. */
export function drfMissing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import django, rest_framework'], { encoding: 'utf8' });
  if (probe.error) return `${PYTHON} cannot run (${probe.error.message})`;
  return probe.status === 0
    ? null
    : `${PYTHON} cannot import Django and DRF (${probe.stderr.trim().split('\n').at(-1)})`;
}

export class DrfReference {
  private readonly child = spawn(PYTHON, [MAIN], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' },
  });
  private readonly lines = createInterface({ input: this.child.stdout! })[Symbol.asyncIterator]();
  private stderr = '';

  constructor() {
    this.child.stderr!.on(
      'data',
      (chunk: Buffer) => void (this.stderr = (this.stderr + chunk.toString()).slice(-4000)),
    );
    this.child.stdin!.on('error', () => {}); // a dead process is reported by the next read
  }

  /** The reference's answers to `requests` with `cities` as its database (coordinates as decimal text). */
  async answer(
    cities: readonly City[],
    coordinates: readonly (readonly [string, string] | null)[],
    baseUrl: string,
    requests: readonly ReferenceRequest[],
  ): Promise<RecordedAnswer[]> {
    const records = cities.map((c, i) => ({
      ...c,
      longitude: coordinates[i]?.[0] ?? null,
      latitude: coordinates[i]?.[1] ?? null,
    }));
    this.child.stdin!.write(`${JSON.stringify({ cities: records, baseUrl, requests })}\n`);
    const answers: RecordedAnswer[] = [];
    for (;;) {
      const { value, done } = await this.lines.next();
      if (done) throw new Error(`the DRF reference (${MAIN}) stopped:\n${this.stderr}`);
      const line = JSON.parse(value) as { done?: true; status: number; headers: Record<string, string>; body: string };
      if (line.done) return answers;
      answers.push({ status: line.status, headers: line.headers, body: Buffer.from(line.body, 'base64') });
    }
  }

  close(): void {
    this.child.stdin!.end();
  }
}
