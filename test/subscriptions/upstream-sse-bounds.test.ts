/** The count of an unfinished SSE event's bytes, which bounds what the router buffers per upstream event. */
import { describe, expect, it } from 'vitest';
import { PendingEventBytes, readCapped } from '../../src/kernel/subscriptions/upstream-sse-bounds.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('PendingEventBytes', () => {
  it('grows while no blank line arrives, and restarts after each one, also when it straddles two chunks', () => {
    const meter = new PendingEventBytes();
    expect(meter.add(bytes('event: next\ndata: '))).toBe(18);
    expect(meter.add(bytes('xxxx'))).toBe(22);
    // The event ends in this chunk (23 bytes with its line end); the next one has begun.
    expect(meter.add(bytes('\n\nda'))).toBe(23);
    expect(meter.add(bytes('ta: 1\r\n'))).toBe(8);
    // A CRLF blank line split after its CR: the LF completes it, it is no second blank line.
    expect(meter.add(bytes('\r'))).toBe(8);
    expect(meter.add(bytes('\nabc'))).toBe(3);
    expect(meter.add(bytes('\n'))).toBe(4);
    expect(meter.add(bytes('\ndata: 2\r\rz'))).toBe(8);
    expect(meter.add(bytes(''))).toBe(1);
  });

  it('does not take one CRLF for a blank line', () => {
    const meter = new PendingEventBytes();
    expect(meter.add(bytes('data: a\r'))).toBe(8);
    expect(meter.add(bytes('\ndata: b\r\n'))).toBe(16);
  });

  it('measures an event that starts and ends inside one chunk', () => {
    const meter = new PendingEventBytes();
    const big = `data: ${'x'.repeat(5000)}\n\n`;
    expect(meter.add(bytes(`data: 1\n\n${big}data: 2\n\n`))).toBe(5007);
    expect(meter.add(bytes(`data: 3\n\n${big}`))).toBe(5007);
  });

  it('does not count finished comment lines, with or without blank lines between them', () => {
    const meter = new PendingEventBytes();
    const comments = ': keep-alive\n'.repeat(1000);
    expect(meter.add(bytes(comments))).toBe(12 + 1);
    expect(meter.add(bytes(`event: next\n${comments}data: 1\n`))).toBe(12 + 13);
    expect(meter.add(bytes(`${comments}\n`))).toBe(20 + 13);
    expect(meter.add(bytes(':\r\n:\r:\n'))).toBe(2);
  });

  it('counts an unfinished line whatever it is, so an endless comment line is bounded', () => {
    const meter = new PendingEventBytes();
    expect(meter.add(bytes(': ping'))).toBe(6);
    expect(meter.add(bytes('x'.repeat(1000)))).toBe(1006);
    expect(meter.add(bytes(`${'x'.repeat(1000)}\n`))).toBe(2007);
    expect(meter.add(bytes(`: ${'y'.repeat(3000)}\ndata: 1`))).toBe(3003);
  });
});

describe('readCapped', () => {
  it('reads only the first bytes of an endless body and cancels the rest', async () => {
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(bytes('y'.repeat(1000)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const text = await readCapped(body, 2500);
    expect(text).toBe('y'.repeat(2500));
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });
});
