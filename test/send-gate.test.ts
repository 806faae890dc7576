import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SendGate } from '../src/http/send-gate.js';

/** Just what the gate reads of a socket and a response. */
class FakeSocket extends EventEmitter {
  writableNeedDrain = false;
  writableLength = 0;
  destroyed = false;
  destroy() {
    this.destroyed = true;
  }
}
class FakeResponse extends EventEmitter {
  constructor(public socket: FakeSocket | null) {
    super();
  }
  assign(socket: FakeSocket) {
    this.socket = socket;
    this.emit('socket', socket);
  }
}
const response = (socket: FakeSocket | null = new FakeSocket()) => new FakeResponse(socket);
const asRes = (res: FakeResponse) => res as unknown as ServerResponse;

afterEach(() => vi.useRealTimers());

describe('SendGate: an answer is computed only once it can be written', () => {
  it.each([
    ['the connection is free: at once', () => response(), () => undefined, true],
    ['queued behind an earlier answer (no socket yet): not yet', () => response(null), () => undefined, false],
    [
      'queued, then given the socket: then',
      () => response(null),
      (res: FakeResponse) => res.assign(new FakeSocket()),
      true,
    ],
    [
      'its socket still holds unsent bytes: not yet',
      () => response(Object.assign(new FakeSocket(), { writableNeedDrain: true })),
      () => undefined,
      false,
    ],
    [
      'the client is gone: never',
      () => response(Object.assign(new FakeSocket(), { destroyed: true })),
      () => undefined,
      false,
    ],
  ])('%s', (_, make, then, answered) => {
    const gate = new SendGate(1000, 1000);
    const res = make();
    const answer = vi.fn();
    gate.admit(asRes(res), answer);
    then(res);
    expect(answer.mock.calls.length).toBe(answered ? 1 : 0);
  });

  it('a socket that must drain first: answered on its drain', () => {
    const gate = new SendGate(1000, 1000);
    const socket = Object.assign(new FakeSocket(), { writableNeedDrain: true });
    const answer = vi.fn();
    gate.admit(asRes(response(socket)), answer);
    expect(answer).not.toHaveBeenCalled();
    socket.writableNeedDrain = false;
    socket.emit('drain');
    expect(answer).toHaveBeenCalledOnce();
  });

  it('across connections, answers wait for the byte budget, then go in arrival order', () => {
    const gate = new SendGate(1000, 1000);
    const order: string[] = [];
    const [a, b, c, d] = [response(), response(), response(), response()];
    gate.admit(asRes(a), () => (order.push('a'), gate.hold(asRes(a), 600)));
    gate.admit(asRes(b), () => (order.push('b'), gate.hold(asRes(b), 600))); // admitted: 600 < 1000
    gate.admit(asRes(c), () => (order.push('c'), gate.hold(asRes(c), 500)));
    gate.admit(asRes(d), () => order.push('d'));
    expect([order, gate.heldBytes]).toEqual([['a', 'b'], 1200]);
    a.emit('close');
    expect([order, gate.heldBytes]).toEqual([['a', 'b', 'c'], 1100]); // c takes the room, d waits on
    b.emit('close');
    expect([order, gate.heldBytes]).toEqual([['a', 'b', 'c', 'd'], 500]);
    c.emit('close');
    expect(gate.heldBytes).toBe(0);
  });

  it('a waiting answer whose client left meanwhile is skipped', () => {
    const gate = new SendGate(100, 1000);
    const [a, b, c] = [response(), response(), response()];
    const answered = vi.fn();
    gate.admit(asRes(a), () => gate.hold(asRes(a), 100));
    gate.admit(asRes(b), answered);
    gate.admit(asRes(c), answered);
    b.socket!.destroyed = true;
    a.emit('close');
    expect(answered).toHaveBeenCalledOnce();
  });
});

describe('SendGate: a client that takes no byte of its answer for a whole period is cut off', () => {
  it.each([
    ['no progress for two checks: closed', [5000, 5000], true],
    ['some progress at each check: kept', [5000, 4000, 3000], false],
    ['drained: kept', [5000, 0, 0], false],
  ])('%s', (_, lengths, closed) => {
    vi.useFakeTimers();
    const gate = new SendGate(1_000_000, 100);
    const res = response();
    const socket = res.socket!;
    gate.admit(asRes(res), () => gate.hold(asRes(res), 500));
    for (const length of lengths) {
      Object.assign(socket, { writableLength: length, writableNeedDrain: length > 0 });
      vi.advanceTimersByTime(100);
    }
    expect(socket.destroyed).toBe(closed);
  });
});
