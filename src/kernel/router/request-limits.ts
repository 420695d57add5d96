import { Kind, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { LimitsConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';

/** Depth and alias counts of a document (fragments followed, cycles cut). */
function measure(document: DocumentNode): { depth: number; aliases: number } {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  let aliases = 0;
  const walk = (set: SelectionSetNode, depth: number, visiting: Set<string>): number => {
    let deepest = depth;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.alias) aliases++;
        if (selection.selectionSet) deepest = Math.max(deepest, walk(selection.selectionSet, depth + 1, visiting));
        else deepest = Math.max(deepest, depth + 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        deepest = Math.max(deepest, walk(selection.selectionSet, depth, visiting));
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || visiting.has(name)) continue;
        visiting.add(name);
        deepest = Math.max(deepest, walk(fragment, depth, visiting));
        visiting.delete(name);
      }
    }
    return deepest;
  };
  let depth = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) depth = Math.max(depth, walk(definition.selectionSet, 0, new Set()));
  }
  return { depth, aliases };
}

const checked = new WeakMap<DocumentNode, RouterError | null>();

/**
 * Refuses documents deeper or with more aliases than `limits` allows
 * (0 = no limit). Token counts are enforced while parsing.
 */
export function checkDocumentLimits(document: DocumentNode, limits: LimitsConfig): void {
  if (limits.max_depth === 0 && limits.max_aliases === 0) return;
  let verdict = checked.get(document);
  if (verdict === undefined) {
    const { depth, aliases } = measure(document);
    verdict = null;
    if (limits.max_depth > 0 && depth > limits.max_depth) {
      verdict = new RouterError('MAX_DEPTH_EXCEEDED', `The operation is ${depth} levels deep; the limit is ${limits.max_depth}.`, { status: 400 });
    } else if (limits.max_aliases > 0 && aliases > limits.max_aliases) {
      verdict = new RouterError('MAX_ALIASES_EXCEEDED', `The operation uses ${aliases} aliases; the limit is ${limits.max_aliases}.`, { status: 400 });
    }
    checked.set(document, verdict);
  }
  if (verdict) throw verdict;
}
