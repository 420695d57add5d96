import { envelop, useEngine, useSchema, type Plugin as EnvelopPlugin } from '@envelop/core';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { CoreConfig } from '../config/core-schema.js';
import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import type { StageScope } from '../pipeline/stage-runner.js';
import type { GraphQLResponseBody, OperationRequest } from '../pipeline/stages.js';
import { scanDocument } from './document-scan.js';
import { subscriptionRootConditionError } from './subscription-root-conditions.js';
import { executeFederated, type OperationContext } from './operation-runner.js';
import { checkIntrospection, isStackOverflow, nestedTooDeeply } from './request-limits.js';

/** One operation's view of the engine: parse, validate, execute. */
export interface EngineSession {
  /** Throws a GraphQLError on a syntax error. */
  parse(query: string): DocumentNode;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[];
  execute(document: DocumentNode, operationName: string | undefined, coercedVariables: Readonly<Record<string, unknown>>, context: OperationContext): Promise<GraphQLResponseBody>;
}

export interface ExecutionEngine {
  begin(request: OperationRequest, scope: StageScope): EngineSession;
}

const OPERATION_CONTEXT = Symbol.for('switchyard.operation');
const COERCED_VARIABLES = Symbol.for('switchyard.coercedVariables');

const SPECIFIED_RULES: ReadonlySet<ValidationRule> = new Set(specifiedRules);

/** Parsed documents kept: estimated heap (document-scan.ts: 512 bytes a token + the text), across the cache. */
export const DOCUMENT_CACHE_BYTES = 64 * 1024 * 1024;
/** A document estimated above this (about 16,000 tokens, some 50-100 KB of text) is parsed for each request, not kept. */
export const DOCUMENT_CACHE_ENTRY_BYTES = 8 * 1024 * 1024;

/**
 * Parsing and validation with caches. Documents by text (LRU, bounded by
 * count and by estimated size), kept only once they validated: a document
 * that fails the limits check or validation is parsed anew if sent again,
 * and held by nothing once its request ends. Validation successes per
 * graph and document (weakly held, so bounded by the documents kept).
 */
export class DocumentCache {
  private readonly documents: LRUCache<string, DocumentNode>;
  /** Text and estimated size of each document parsed here, until it is kept or dropped. */
  private readonly origins = new WeakMap<DocumentNode, { readonly text: string; readonly size: number }>();
  private readonly valid = new WeakMap<GraphQLSchema, WeakSet<DocumentNode>>();
  private readonly rules: readonly ValidationRule[];

  constructor(private readonly config: CoreConfig) {
    this.documents = new LRUCache({
      max: Math.max(1, config.engine.execution_plan_cache_size),
      maxSize: DOCUMENT_CACHE_BYTES,
      maxEntrySize: DOCUMENT_CACHE_ENTRY_BYTES,
    });
    this.rules = config.introspection.enabled ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  }

  parse = (query: string): DocumentNode => {
    const cached = this.documents.get(query);
    if (cached) return cached;
    const { max_tokens: maxTokens, max_depth: maxDepth } = this.config.limits;
    // Linear pre-scan: nesting bound (graphql-js parses recursively) and tokens with comments counted.
    const scan = scanDocument(query, { maxTokens, maxDepth });
    let document: DocumentNode;
    try {
      document = parse(query, maxTokens > 0 ? { maxTokens } : undefined);
    } catch (error) {
      if (maxTokens > 0 && error instanceof GraphQLError && /contains more th\w* \d+ tokens/.test(error.message)) {
        throw new RouterError('MAX_TOKENS_EXCEEDED', `The operation has more than ${maxTokens} tokens.`, { status: 400 });
      }
      if (isStackOverflow(error)) throw nestedTooDeeply('parse');
      throw error;
    }
    this.origins.set(document, { text: query, size: scan.weight });
    return document;
  };

  /**
   * Validates with the standard rules (and, with introspection off,
   * NoSchemaIntrospectionCustomRule). `rules` come from envelop, which hands
   * over a fresh array (the standard rules plus any a plugin added): the
   * introspection rule is added to them too, and when they are just the
   * standard rules the cached result is used.
   */
  validate = (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]): readonly GraphQLError[] => {
    const extra = rules === undefined || rules === this.rules || this.isStandard(rules) ? undefined : rules;
    let valid = this.valid.get(schema);
    if (!extra && valid?.has(document)) return [];
    // Checked first: graphql-js 16 would throw out of validate() on it.
    const conditional = subscriptionRootConditionError(document);
    if (conditional) {
      this.forget(document);
      return [conditional];
    }
    let errors: readonly GraphQLError[];
    try {
      errors = validate(schema, document, extra ? this.withIntrospectionRule(extra) : this.rules);
    } catch (error) {
      if (isStackOverflow(error)) throw nestedTooDeeply('validate');
      throw error;
    }
    if (errors.length > 0) {
      this.forget(document);
      return errors.map(explainAborted);
    }
    if (!extra) {
      if (!valid) {
        valid = new WeakSet();
        this.valid.set(schema, valid);
      }
      valid.add(document);
    }
    this.keep(document);
    return errors;
  };

  /**
   * Whether `rules` are just graphql-js's standard rules (envelop's copy of
   * them), with NoSchemaIntrospectionCustomRule allowed beside them when
   * introspection is off (this cache adds it then anyway).
   */
  private isStandard(rules: readonly ValidationRule[]): boolean {
    if (rules.length < SPECIFIED_RULES.size) return false;
    const seen = new Set<ValidationRule>();
    for (const rule of rules) {
      if (SPECIFIED_RULES.has(rule)) seen.add(rule);
      else if (rule !== NoSchemaIntrospectionCustomRule || this.config.introspection.enabled) return false;
    }
    return seen.size === SPECIFIED_RULES.size;
  }

  private withIntrospectionRule(rules: readonly ValidationRule[]): readonly ValidationRule[] {
    if (this.config.introspection.enabled || rules.includes(NoSchemaIntrospectionCustomRule)) return rules;
    return [...rules, NoSchemaIntrospectionCustomRule];
  }

  /** Keeps a document that validated (under its estimated size; LRU eviction beyond the budget). */
  private keep(document: DocumentNode): void {
    const origin = this.origins.get(document);
    if (!origin) return;
    this.origins.delete(document);
    this.documents.set(origin.text, document, { size: Math.max(1, origin.size) });
  }

  /** Drops a document that failed validation (it may have been kept under another graph). */
  private forget(document: DocumentNode): void {
    const text = this.origins.get(document)?.text ?? document.loc?.source.body;
    if (text !== undefined && this.documents.peek(text) === document) this.documents.delete(text);
  }
}

/** The engine without envelop plugins: direct calls, nothing per request beyond the work. */
export function directEngine(documents: DocumentCache): ExecutionEngine {
  const session: EngineSession = {
    parse: documents.parse,
    validate: documents.validate,
    execute: executeFederated,
  };
  return { begin: () => session };
}

/**
 * The engine with envelop plugins from npm: their `onParse`, `onValidate`,
 * `onContextBuilding` and `onExecute` run, with the federated execution as
 * the execute function they wrap. Built once per graph.
 */
export function envelopEngine(documents: DocumentCache, graph: LoadedGraph, plugins: readonly EnvelopPlugin[]): ExecutionEngine {
  const getEnveloped = envelop({
    plugins: [
      useEngine({
        parse: (source: string | { body: string }) => documents.parse(typeof source === 'string' ? source : source.body),
        validate: (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]) => documents.validate(schema, document, rules),
        execute: federatedExecute,
        subscribe: federatedExecute,
        specifiedRules,
      }),
      useSchema(graph.apiSchema),
      ...plugins,
    ],
  });
  return {
    begin(request) {
      const enveloped = getEnveloped({ request });
      return {
        parse: (query) => enveloped.parse(query),
        validate: (schema, document) => enveloped.validate(schema, document),
        async execute(document, operationName, coercedVariables, context) {
          const contextValue = await enveloped.contextFactory({ [OPERATION_CONTEXT]: context, [COERCED_VARIABLES]: coercedVariables });
          const result = await enveloped.execute({
            schema: enveloped.schema,
            document,
            operationName,
            variableValues: { ...context.variables },
            contextValue,
          });
          return toBody(result as { data?: Record<string, unknown> | null; errors?: readonly unknown[]; extensions?: Record<string, unknown> });
        },
      };
    },
  };
}

async function federatedExecute(args: ExecutionArgs): Promise<{ data?: Record<string, unknown> | null; errors?: GraphQLError[]; extensions?: Record<string, unknown> }> {
  const contextValue = args.contextValue as Record<symbol, unknown>;
  const context = contextValue[OPERATION_CONTEXT] as OperationContext;
  // Plugins may have changed the document since it was validated (onExecute's args).
  checkIntrospection(args.document, context.env.config.introspection.enabled);
  const coerced = (contextValue[COERCED_VARIABLES] ?? {}) as Record<string, unknown>;
  const body = await executeFederated(args.document, args.operationName ?? undefined, coerced, context);
  const result: { data?: Record<string, unknown> | null; errors?: GraphQLError[]; extensions?: Record<string, unknown> } = { data: body.data };
  if (body.errors) result.errors = body.errors.map((e) => new GraphQLError(e.message, { path: e.path, extensions: e.extensions }));
  if (body.extensions) result.extensions = body.extensions;
  return result;
}

function toBody(result: { data?: Record<string, unknown> | null; errors?: readonly unknown[]; extensions?: Record<string, unknown> }): GraphQLResponseBody {
  const body: GraphQLResponseBody = {};
  if ('data' in result) body.data = result.data ?? null;
  if (result.errors && result.errors.length > 0) {
    body.errors = result.errors.map((e) => (e instanceof GraphQLError ? (e.toJSON() as GraphQLErrorJSON) : (e as GraphQLErrorJSON)));
  }
  if (result.extensions) body.extensions = result.extensions;
  return body;
}

/**
 * graphql-js stops comparing fields for merging past a work budget (many
 * repeated fields) with a bare "Validation aborted."; say what it means.
 */
function explainAborted(error: GraphQLError): GraphQLError {
  if (error.message !== 'Validation aborted.') return error;
  return new GraphQLError(
    'Validation aborted: the operation repeats too many fields at one level to check that they can be merged; send each field once (or fewer repeats and aliases).',
    { extensions: error.extensions },
  );
}
