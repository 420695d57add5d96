/**
 * What the plan stage remembers per operation, bounded by entries and by
 * estimated bytes as the router's own document and plan caches are
 * (src/kernel/router/execution-engine.ts, src/kernel/graph/loaded-graph.ts).
 * Entries are keyed by the parsed document itself, never by a copy of its
 * text: a client sending many distinct large documents grows neither map
 * past its bound.
 *
 * - Facts (which scopes and policies an operation's rules name) hang off the
 *   document weakly: they live as long as the router keeps the document
 *   and hold none of it.
 * - Filtered forms (per grant and `@skip`/`@include` values) reuse the
 *   document's unchanged subtrees, which through their locations hold the
 *   whole document: an LRU of at most FILTERED_OPERATIONS documents and
 *   FILTERED_BYTES estimated heap, each document counted in full.
 */
import { visit, type DocumentNode, type Token } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { FilteredOperation, OperationFacts } from './filter-operation.js';

/** Documents whose filtered forms are kept, per graph. */
export const FILTERED_OPERATIONS = 2000;
/** Estimated heap of the kept filtered forms and the documents they hold, per graph. */
export const FILTERED_BYTES = 64 * 1024 * 1024;
/** A document estimated above this (as the router's document cache, which does not keep it either) is filtered for each request. */
export const FILTERED_ENTRY_BYTES = 8 * 1024 * 1024;
/** Filtered forms kept per document: distinct grants and `@skip`/`@include` values (the oldest goes first). */
export const FORMS_PER_DOCUMENT = 32;
/** Operations whose facts are kept per document (a document names few; a client's invented names do not reach the plan stage). */
const FACTS_PER_DOCUMENT = 16;

/** Heap a parsed document takes per token, with locations: the estimate src/kernel/router/document-scan.ts uses. */
const BYTES_PER_TOKEN = 512;
/** Per kept form beyond its own bytes: the map slot and the form's key. */
const FORM_SLOT_BYTES = 128;

/** A filtered form: the operation without what the grant may not see; `all`: the grant sees everything. */
export type FilteredForm = FilteredOperation | 'all';

/** The kept forms of one document (replaced, not mutated, so the LRU re-measures it). */
interface DocumentForms {
  /** Estimated heap of the document itself. */
  readonly documentBytes: number;
  /** Forms by `formKey`, oldest first. */
  readonly forms: ReadonlyMap<string, FilteredForm>;
  /** Estimated heap of the forms. */
  readonly formBytes: number;
}

/** Per-graph memo of the authorization plugin's plan-stage work. */
export class OperationMemo {
  private readonly facts = new WeakMap<DocumentNode, Map<string | undefined, OperationFacts>>();
  private readonly filtered = new LRUCache<DocumentNode, DocumentForms>({
    max: FILTERED_OPERATIONS,
    maxSize: FILTERED_BYTES,
    maxEntrySize: FILTERED_ENTRY_BYTES,
    sizeCalculation: (entry) => Math.max(1, entry.documentBytes + entry.formBytes),
  });

  /** The facts of the operation `operationName` selects in `document`, computed once per document. */
  factsOf(document: DocumentNode, operationName: string | undefined, compute: () => OperationFacts): OperationFacts {
    let byName = this.facts.get(document);
    let known = byName?.get(operationName);
    if (known) return known;
    known = compute();
    if (!byName) this.facts.set(document, (byName = new Map()));
    if (byName.size >= FACTS_PER_DOCUMENT) byName.clear();
    byName.set(operationName, known);
    return known;
  }

  /** The filtered form of `document` for `formKey` (grant, operation name, condition values), computed once while kept. */
  formOf(document: DocumentNode, formKey: string, compute: () => FilteredForm): FilteredForm {
    const entry = this.filtered.get(document);
    const known = entry?.forms.get(formKey);
    if (known) return known;
    const form = compute();
    const documentBytes = entry?.documentBytes ?? documentHeapBytes(document);
    if (documentBytes > FILTERED_ENTRY_BYTES) return form;
    const forms = new Map(entry?.forms);
    let formBytes = entry?.formBytes ?? 0;
    for (const [oldKey, old] of forms) {
      if (forms.size < FORMS_PER_DOCUMENT) break;
      forms.delete(oldKey);
      formBytes -= formBytesOf(oldKey, old);
    }
    forms.set(formKey, form);
    formBytes += formBytesOf(formKey, form);
    this.filtered.set(document, { documentBytes, forms, formBytes });
    return form;
  }

  /** Estimated heap of the kept filtered forms and their documents (for tests and diagnostics). */
  get filteredBytes(): number {
    return this.filtered.calculatedSize;
  }
}

function formBytesOf(key: string, form: FilteredForm): number {
  return FORM_SLOT_BYTES + key.length * 2 + (form === 'all' ? 0 : form.ownBytes);
}

/**
 * Estimated heap of a parsed document: its tokens (each AST node links its
 * Location and tokens) and its text, as the router's own estimate; without
 * locations, its nodes.
 */
export function documentHeapBytes(document: DocumentNode): number {
  const loc = document.loc;
  if (loc) {
    let tokens = 0;
    for (let token: Token | null = loc.startToken; token; token = token.next) tokens++;
    return tokens * BYTES_PER_TOKEN + loc.source.body.length * 2;
  }
  let nodes = 0;
  visit(document, {
    enter() {
      nodes++;
    },
  });
  return nodes * BYTES_PER_TOKEN;
}
