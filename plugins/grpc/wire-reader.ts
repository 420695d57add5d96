/**
 * The protobuf wire format, read in place: varints, fixed-width numbers,
 * length-delimited ranges and skipping. The response decoder (from-proto.ts)
 * reads answers with it straight into GraphQL JSON, so no protobufjs message
 * objects are made for them.
 */
import { isUtf8 } from 'node:buffer';

/** Bytes that are not a well-formed protobuf message (truncated, a bad varint, an unknown wire type). */
export class WireFormatError extends Error {
  override readonly name = 'WireFormatError';
}

/** Throws unless a field came with the wire type its proto type is sent with. */
export function expectWireType(wireType: number, expected: number): void {
  if (wireType !== expected) throw new WireFormatError(`wire type ${wireType} where ${expected} was expected`);
}

/** Wire types. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const START_GROUP = 3;
export const END_GROUP = 4;
export const FIXED32 = 5;

const TWO_32 = 4294967296;

/** Deepest nesting of unknown groups skipped (protobuf's own recursion limit, and the Connect plugin's message depth limit). */
export const MAX_GROUP_DEPTH = 100;

/**
 * Short ASCII strings are cut from one Latin-1 view of the whole message
 * instead of decoded one by one: a message holds many short strings (ids,
 * names, dates), each `toString` is a call into C++ costing more than the
 * string, and Latin-1 keeps one character per byte, so byte offsets are
 * string offsets and ASCII bytes read the same as UTF-8. Longer strings, and
 * any with other bytes, are decoded as UTF-8.
 */
const SHORT_STRING_BYTES = 64;

/** Messages up to this size get a Latin-1 view (a string as long as the message). */
const LATIN1_VIEW_MAX_BYTES = 256 * 1024;

// The view of the message decoded last, shared by the readers of the same
// answer (one per entity result); it and its message stay referenced until
// another message's string is read, at most 256 KiB each. Answers are never
// written to after they arrive, so the buffer's identity stands for its bytes.
let viewed: Buffer | undefined;
let view = '';

function latin1View(buf: Buffer): string {
  if (viewed !== buf) {
    view = buf.toString('latin1');
    viewed = buf;
  }
  return view;
}

/** A cursor over one message's bytes. */
export class WireReader {
  /** Next byte to read. */
  pos = 0;
  // The two halves of the last 64-bit varint, as unsigned 32-bit numbers.
  private lo = 0;
  private hi = 0;

  constructor(readonly buf: Buffer) {}

  /** A varint's low 32 bits, unsigned (tags, lengths, uint32). Longer varints (negative int32) are consumed whole. */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    let byte = buf[pos++]!;
    let value = byte & 0x7f;
    if (byte >= 0x80) {
      byte = buf[pos++]!;
      value |= (byte & 0x7f) << 7;
      if (byte >= 0x80) {
        byte = buf[pos++]!;
        value |= (byte & 0x7f) << 14;
        if (byte >= 0x80) {
          byte = buf[pos++]!;
          value |= (byte & 0x7f) << 21;
          if (byte >= 0x80) {
            byte = buf[pos++]!;
            value |= byte << 28;
            // Bytes 6 to 10 only carry the sign extension of a negative number.
            for (let extra = 0; byte >= 0x80; extra++) {
              if (extra === 5) throw new WireFormatError('a varint longer than 10 bytes');
              byte = buf[pos++]!;
            }
          }
        }
      }
    }
    if (pos > buf.length) throw new WireFormatError('a varint runs past the end of the message');
    this.pos = pos;
    return value >>> 0;
  }

  /** A varint as int32 (negative numbers are sent as 10-byte varints). */
  int32(): number {
    return this.uint32() | 0;
  }

  /** A zigzag-encoded sint32. */
  sint32(): number {
    const value = this.uint32();
    return (value >>> 1) ^ -(value & 1);
  }

  /** A 64-bit varint as a number (exact up to 2^53), `signed` as int64, else as uint64. */
  varint64(signed: boolean): number {
    this.readVarint64();
    return this.number64(signed);
  }

  /** A zigzag-encoded sint64 as a number. */
  sint64(): number {
    this.readVarint64();
    const mask = -(this.lo & 1);
    this.lo = (((this.lo >>> 1) | (this.hi << 31)) ^ mask) >>> 0;
    this.hi = ((this.hi >>> 1) ^ mask) >>> 0;
    return this.number64(true);
  }

  bool(): boolean {
    this.readVarint64();
    return this.lo !== 0 || this.hi !== 0;
  }

  fixed32(): number {
    return this.bytesAt(4).readUInt32LE(this.pos - 4);
  }

  sfixed32(): number {
    return this.bytesAt(4).readInt32LE(this.pos - 4);
  }

  float(): number {
    return this.bytesAt(4).readFloatLE(this.pos - 4);
  }

  double(): number {
    return this.bytesAt(8).readDoubleLE(this.pos - 8);
  }

  /** fixed64 (`signed`: sfixed64) as a number. */
  fixed64(signed: boolean): number {
    const buf = this.bytesAt(8);
    this.lo = buf.readUInt32LE(this.pos - 8);
    this.hi = buf.readUInt32LE(this.pos - 4);
    return this.number64(signed);
  }

  /** A length prefix; returns where the range it announces ends (the cursor is at its start). */
  delimited(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.buf.length) throw new WireFormatError('a length-delimited field runs past the end of the message');
    return end;
  }

  /** A length-delimited field as UTF-8 text; malformed UTF-8 is refused, as proto3 requires (and protobufjs does). */
  string(): string {
    const end = this.delimited();
    const start = this.pos;
    this.pos = end;
    const buf = this.buf;
    if (end - start <= SHORT_STRING_BYTES && buf.length <= LATIN1_VIEW_MAX_BYTES) {
      let ascii = true;
      for (let i = start; i < end; i++) {
        if (buf[i]! > 0x7f) {
          ascii = false;
          break;
        }
      }
      if (ascii) return latin1View(buf).slice(start, end);
    }
    const text = buf.toString('utf8', start, end);
    // The decoder replaces malformed sequences with U+FFFD: only then is a check needed.
    if (text.includes('\uFFFD') && !isUtf8(this.buf.subarray(start, end))) throw new WireFormatError(`a string field holds malformed UTF-8 at offset ${start}`);
    return text;
  }

  /** A length-delimited field as base64 (how a GraphQL value carries bytes). */
  base64(): string {
    const end = this.delimited();
    const start = this.pos;
    this.pos = end;
    return this.buf.toString('base64', start, end);
  }

  /** Skips a field's value of wire type `wireType` (groups included). */
  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.readVarint64();
        return;
      case FIXED64:
        this.bytesAt(8);
        return;
      case LENGTH_DELIMITED:
        this.pos = this.delimited();
        return;
      case START_GROUP:
        this.skipGroup();
        return;
      case FIXED32:
        this.bytesAt(4);
        return;
      default:
        throw new WireFormatError(`wire type ${wireType} at offset ${this.pos}`);
    }
  }

  /**
   * Skips a group's fields up to its END_GROUP tag. Nested groups are counted,
   * not recursed into, and refused past MAX_GROUP_DEPTH: a hostile answer of
   * nothing but start-group tags would otherwise overflow the stack.
   */
  private skipGroup(): void {
    let depth = 1;
    while (depth > 0) {
      const wireType = this.uint32() & 7;
      if (wireType === END_GROUP) depth--;
      else if (wireType === START_GROUP) {
        if (++depth > MAX_GROUP_DEPTH) throw new WireFormatError(`groups nested more than ${MAX_GROUP_DEPTH} levels deep at offset ${this.pos}`);
      } else this.skip(wireType);
    }
  }

  /** Moves past `width` bytes; returns the buffer to read them from (ending at the new position). */
  private bytesAt(width: number): Buffer {
    this.pos += width;
    if (this.pos > this.buf.length) throw new WireFormatError('a fixed-width field runs past the end of the message');
    return this.buf;
  }

  private readVarint64(): void {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    let byte = 0;
    let done = false;
    for (let shift = 0; shift < 28; shift += 7) {
      byte = buf[pos++]!;
      lo |= (byte & 0x7f) << shift;
      if (byte < 0x80) {
        done = true;
        break;
      }
    }
    if (!done) {
      byte = buf[pos++]!;
      lo |= (byte & 0x7f) << 28;
      hi = (byte & 0x7f) >> 4;
      if (byte >= 0x80) {
        for (let shift = 3; ; shift += 7) {
          if (shift > 31) throw new WireFormatError('a varint longer than 10 bytes');
          byte = buf[pos++]!;
          hi |= (byte & 0x7f) << shift;
          if (byte < 0x80) break;
        }
      }
    }
    if (pos > buf.length) throw new WireFormatError('a varint runs past the end of the message');
    this.pos = pos;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  private number64(signed: boolean): number {
    if (signed && this.hi >>> 31) {
      const lo = (~this.lo + 1) >>> 0;
      let hi = ~this.hi >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
      return -(lo + hi * TWO_32);
    }
    return this.lo + this.hi * TWO_32;
  }
}
