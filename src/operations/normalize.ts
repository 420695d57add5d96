/**
 * Normalization for the safelist: two texts that differ only in whitespace,
 * commas or comments are the same operation. graphql-js parses and prints
 * the text again; printing is canonical for everything the lexer ignores.
 */
import { parse, print, type DocumentNode } from 'graphql';
import { sha256Hex } from './operation-id.js';

/** The canonical text of an operation document; throws a GraphQLError on a syntax error. */
export function normalizeOperation(text: string): string {
  return normalizeDocument(parse(text, { noLocation: true }));
}

/** The canonical text of a parsed document. */
export function normalizeDocument(document: DocumentNode): string {
  return print(document);
}

/** SHA-256 of the normalized text, or undefined when the text does not parse. */
export function normalizedId(text: string): string | undefined {
  try {
    return sha256Hex(normalizeOperation(text));
  } catch {
    return undefined;
  }
}
