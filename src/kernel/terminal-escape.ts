/**
 * Human-readable log lines go to a terminal, which acts on control
 * characters. pino-pretty prints field values as JSON strings, which escapes
 * C0 controls (ESC included) but leaves C1 controls (U+0080-U+009F: U+009B
 * starts an escape sequence on many terminals, U+0085 breaks lines) and the
 * line and paragraph separators U+2028/U+2029 as they are. This stream
 * escapes those, as `\u009b`, in what reaches the terminal.
 */
import { Writable } from 'node:stream';
import type { DestinationStream } from 'pino';

const TERMINAL_UNSAFE = /[\u0080-\u009f\u2028\u2029]/g;

/** `text` with C1 controls and U+2028/U+2029 written as `\uXXXX`. */
export function escapeForTerminal(text: string): string {
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A stream that writes what it receives to `target`, escaped for a terminal; synchronous when `target` is. */
export function terminalSafeStream(target: DestinationStream): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      target.write(escapeForTerminal(typeof chunk === 'string' ? chunk : chunk.toString('utf8')));
      callback();
    },
  });
}
