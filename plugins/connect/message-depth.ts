/**
 * How deep a request message nests, checked before it is decoded. Contract
 * messages may be recursive (`message EchoInput { repeated EchoInput b = 2; }`),
 * so a client could send one nested thousands of levels deep; decoding it,
 * converting it to variables and coercing those in GraphQL all recurse per
 * level. A message deeper than MAX_MESSAGE_DEPTH is refused with
 * `resource_exhausted`, like a body over `limits.max_request_body`. Both
 * checks walk with their own stack, so the hostile message cannot overflow
 * the check itself.
 */
import type { DescField, DescMessage } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { Code } from '@connectrpc/connect';
import { ConnectFailure } from './connect-errors.js';

/** Most message levels a request message may have (the request message itself is level 1); protobuf's usual recursion limit. */
export const MAX_MESSAGE_DEPTH = 100;

/**
 * The `recursionLimit` for @bufbuild/protobuf's decoders: one more than
 * MAX_MESSAGE_DEPTH, because they count a wrapper (`google.protobuf.Int32Value`)
 * as a level where the checks here, like its JSON form, do not.
 */
export const DECODER_RECURSION_LIMIT = MAX_MESSAGE_DEPTH + 1;

/** The failure of a message nested too deep. */
export function tooDeep(message: DescMessage): ConnectFailure {
  return new ConnectFailure(Code.ResourceExhausted, `the ${message.name} message is nested more than ${MAX_MESSAGE_DEPTH} levels deep`);
}

/**
 * Whether a parsed JSON message stays within MAX_MESSAGE_DEPTH: each object
 * is a level (a message), and so is an array directly inside an array (a
 * repeated field's array is not: its items are the levels).
 */
export function jsonWithinDepth(value: unknown): boolean {
  const pending: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const current = next.value;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      if (next.depth > MAX_MESSAGE_DEPTH) return false;
      for (const item of current) pending.push({ value: item, depth: Array.isArray(item) ? next.depth + 1 : next.depth });
      continue;
    }
    const depth = next.depth + 1;
    if (depth > MAX_MESSAGE_DEPTH) return false;
    for (const item of Object.values(current)) pending.push({ value: item, depth });
  }
  return true;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON message's text; bytes that are not UTF-8 (RFC 8259 §8.1) are the client's `invalid_argument`, not replacement characters passed on. */
export function decodeUtf8(input: Uint8Array): string {
  try {
    return UTF8.decode(input);
  } catch {
    throw new ConnectFailure(Code.InvalidArgument, 'the message is not valid UTF-8');
  }
}

/**
 * A `textDecoder` for connect-node's JSON serialization (`jsonOptions`) that
 * refuses a message deeper than MAX_MESSAGE_DEPTH before the decoder sees
 * it: connect-node passes a ConnectError thrown there on unchanged, where the
 * decoder's own recursion limit would be `invalid_argument`.
 */
export function depthCheckingTextDecoder(message: DescMessage): { decode(input: Uint8Array): string } {
  return {
    decode(input) {
      const text = decodeUtf8(input);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return text; // Not JSON: the decoder says how.
      }
      if (!jsonWithinDepth(parsed)) throw tooDeep(message);
      return text;
    },
  };
}

const WRAPPER = /^google\.protobuf\.[A-Za-z0-9]+Value$/;

/** The message a field holds, when descending into it can add levels (wrappers hold one scalar; map entries are left to the decoder). */
function nestedMessage(field: DescField | undefined): DescMessage | undefined {
  if (field === undefined) return undefined;
  const message = field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message') ? field.message : undefined;
  return message === undefined || WRAPPER.test(message.typeName) ? undefined : message;
}

interface Frame {
  /** The message being read; undefined inside an unknown group. */
  readonly message: DescMessage | undefined;
  /** Where its bytes end (a group ends at its end tag instead). */
  readonly end: number;
  readonly group: boolean;
}

/**
 * Whether binary message bytes stay within MAX_MESSAGE_DEPTH: each message
 * field (and each group, known or not) read inside another is a level.
 * Bytes that do not decode count as within: the decoder then refuses them
 * with its own message.
 */
export function binaryWithinDepth(message: DescMessage, bytes: Uint8Array): boolean {
  const reader = new BinaryReader(bytes);
  const stack: Frame[] = [{ message, end: bytes.length, group: false }];
  try {
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      if (reader.pos >= frame.end) {
        if (frame.group) return true;
        stack.pop();
        continue;
      }
      const [number, wireType] = reader.tag();
      const field = frame.message?.fields.find((f) => f.number === number);
      if (wireType === WireType.EndGroup) {
        stack.pop();
      } else if (wireType === WireType.StartGroup) {
        if (stack.length >= MAX_MESSAGE_DEPTH) return false;
        stack.push({ message: field?.message, end: frame.end, group: true });
      } else if (wireType === WireType.LengthDelimited) {
        const length = reader.uint32();
        const end = reader.pos + length;
        if (end > frame.end) return true;
        const nested = nestedMessage(field);
        if (nested === undefined) reader.pos = end;
        else if (stack.length >= MAX_MESSAGE_DEPTH) return false;
        else stack.push({ message: nested, end, group: false });
      } else {
        reader.skip(wireType);
      }
    }
  } catch {
    // Malformed: the decoder says how.
  }
  return true;
}
