import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOG_FLUSH_MS, LogBuffer } from '../src/http/request-log.js';

// The request log is buffered as nginx's `access_log ... buffer=64k flush=1s`: one write for many
// lines (a write per request cost a third of the throughput, issue #26 item 4), none held long.

describe('LogBuffer writes lines together', () => {
  let written: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    written = [];
  });
  afterEach(() => vi.useRealTimers());

  it.each([
    ['nothing before the buffer fills or a second passes', 100, ['a', 'b'], LOG_FLUSH_MS - 1, []],
    ['every held line, one write, a second after the first', 100, ['a', 'b'], LOG_FLUSH_MS, ['a\nb']],
    ['at once when the lines reach the buffer size', 8, ['abc', 'def'], 0, ['abc\ndef']],
    ['what came after a full buffer, a second later', 8, ['abc', 'def', 'g'], LOG_FLUSH_MS, ['abc\ndef', 'g']],
  ])('%s', (_, bytes, lines, ms, expected) => {
    const buffer = new LogBuffer((text) => written.push(text), bytes);
    for (const line of lines) buffer.add(line);
    vi.advanceTimersByTime(ms);
    expect(written).toEqual(expected);
  });

  it.each([
    ['flush() writes what is held at once (a server that closes)', ['a', 'b'], ['a\nb']],
    ['flush() with nothing held writes nothing', [], []],
  ])('%s', (_, lines, expected) => {
    const buffer = new LogBuffer((text) => written.push(text));
    for (const line of lines) buffer.add(line);
    buffer.flush();
    vi.advanceTimersByTime(10 * LOG_FLUSH_MS);
    expect(written).toEqual(expected);
  });
});
