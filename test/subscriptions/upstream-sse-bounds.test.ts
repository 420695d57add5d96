/** The count of an unfinished SSE event's bytes, which bounds what the router buffers per upstream event. */
import { describe, expect, it } from 'vitest';
import { PendingEventBytes, readCapped } from '../../src/kernel/subscriptions/upstream-sse-bounds.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('PendingEventBytes', () => {
  it('grows while no blank line arrives, and restarts after each one, also when it straddles two chunks', () => {
    const meter = new PendingEventBytes();
    expect(meter.add(bytes('event: next\ndata: '))).toBe(18);
    expect(meter.add(bytes('xxxx'))).toBe(22);
    expect(meter.add(bytes('\n\nda'))).toBe(2);
    expect(meter.add(bytes('ta: 1\r\n'))).toBe(9);
    // A CRLF blank line split after its CR: the LF is counted with the next event (one byte too many, never too few).
    expect(meter.add(bytes('\r\nabc'))).toBe(4);
    expect(meter.add(bytes('\n'))).toBe(5);
    expect(meter.add(bytes('\ndata: 2\r\rz'))).toBe(1);
  });

  it('does not take one CRLF for a blank line', () => {
    const meter = new PendingEventBytes();
    expect(meter.add(bytes('data: a\r'))).toBe(8);
    expect(meter.add(bytes('\ndata: b\r\n'))).toBe(18);
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
