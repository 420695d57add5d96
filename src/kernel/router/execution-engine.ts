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
import { executeFederated, type OperationContext } from './operation-runner.js';

/** One operation's view of the engine: parse, validate, execute. */
export interface EngineSession {
  /** Throws a GraphQLError on a syntax error. */
  parse(query: string): DocumentNode;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[];
  execute(
    document: DocumentNode,
    operationName: string | undefined,
    coercedVariables: Readonly<Record<string, unknown>>,
    context: OperationContext,
  ): Promise<GraphQLResponseBody>;
}

export interface ExecutionEngine {
  begin(request: OperationRequest, scope: StageScope): EngineSession;
}

const OPERATION_CONTEXT = Symbol.for('switchyard.operation');
const COERCED_VARIABLES = Symbol.for('switchyard.coercedVariables');

/** Parsing and validation with caches: documents by text, validation results per graph and document. */
export class DocumentCache {
  private readonly documents: LRUCache<string, DocumentNode>;
  private readonly validations = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly GraphQLError[]>>();
  private readonly rules: readonly ValidationRule[];

  constructor(private readonly config: CoreConfig) {
    this.documents = new LRUCache({ max: Math.max(1, config.engine.execution_plan_cache_size) });
    this.rules = config.introspection.enabled ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  }

  parse = (query: string): DocumentNode => {
    const cached = this.documents.get(query);
    if (cached) return cached;
    const maxTokens = this.config.limits.max_tokens;
    let document: DocumentNode;
    try {
      document = parse(query, maxTokens > 0 ? { maxTokens } : undefined);
    } catch (error) {
      if (maxTokens > 0 && error instanceof GraphQLError && /contains more th\w* \d+ tokens/.test(error.message)) {
        throw new RouterError('MAX_TOKENS_EXCEEDED', `The operation has more than ${maxTokens} tokens.`, { status: 400 });
      }
      throw error;
    }
    this.documents.set(query, document);
    return document;
  };

  validate = (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]): readonly GraphQLError[] => {
    if (rules !== undefined && rules !== this.rules) return validate(schema, document, rules);
    let bySchema = this.validations.get(schema);
    if (!bySchema) {
      bySchema = new WeakMap();
      this.validations.set(schema, bySchema);
    }
    let errors = bySchema.get(document);
    if (!errors) {
      errors = validate(schema, document, this.rules);
      bySchema.set(document, errors);
    }
    return errors;
  };
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
        validate: (schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]) =>
          documents.validate(schema, document, rules),
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
