/**
 * Switchyard: a federated GraphQL router built as a framework of plugins.
 * This is the public SDK: the router entry, the plugin contract, and the
 * helpers plugins are written with.
 */
export { createRouter, type CreateRouterOptions, type Router } from './kernel/router/router.js';
export type { ListenInfo } from './kernel/router/http-server.js';
export { isLoopbackHost, parseListenAddress, warnIfExposed } from './kernel/router/listen-address.js';
export {
  MAIN_LISTENER_TIMEOUTS,
  SIDE_LISTENER_TIMEOUTS,
  bindListener,
  guardHttp2Server,
  guardHttpServer,
  guardSocket,
  listenerTimeouts,
  type ListenerGuardOptions,
  type ListenerTimeouts,
} from './kernel/router/listener-guard.js';
export {
  startSideListener,
  type DualProtocolListener,
  type Http1Listener,
  type PluginListenOptions,
  type SideListener,
  type SideListenerOptions,
  type SideListenerTarget,
} from './kernel/listen/side-listener.js';
export type { DualProtocolHandler } from './kernel/listen/h2c-server.js';
export { ListenError, type ListenErrorSubject } from './kernel/listen/listen-error.js';
export type { GraphInput } from './kernel/router/graph-manager.js';

// Plugin contract
export {
  definePlugin,
  type ExecuteRequest,
  type PluginContext,
  type PluginDefinition,
  type PluginFactory,
  type PluginInstance,
  type RouterHandle,
  type SwitchyardPlugin,
  type TransportFactory,
} from './kernel/pipeline/plugin.js';
export type { GraphQLRequestStep, HttpAnswer, HttpRequest, HttpRoute, PluginHttp } from './kernel/pipeline/http-routes.js';
export {
  HOOK_NAMES,
  type AfterStageEvent,
  type AfterStageHook,
  type Hooks,
  type MaybePromise,
  type StageEvent,
  type StageHook,
  type StageOutcome,
  type StagePerform,
  type StageWrapper,
} from './kernel/pipeline/hooks.js';
export {
  STAGE_NAMES,
  type GraphQLResponseBody,
  type MergeInput,
  type MergeOutput,
  type OperationRequest,
  type OperationResponse,
  type ParseInput,
  type PlanInput,
  type StageInput,
  type StageName,
  type StageOutput,
  type StageTypes,
  type ValidateInput,
} from './kernel/pipeline/stages.js';
export { RequestState, StateKey } from './kernel/pipeline/state.js';
/** Set when the answer depends on the caller beyond what subgraphs said (authorization): the client's Cache-Control is then `private`. */
export { privateAnswer } from './kernel/pipeline/private-answer.js';
/** Ends a subscription started by this request at a given time, with an error (the authentication plugin's token expiry). */
export { endStreamBy } from './kernel/subscriptions/stream-deadline.js';
/** Adds headers to the connection a subscription opens to its subgraph (opened without the fetch stage; the authentication plugin's forwarded claims). */
export { addSubscriptionConnectionHeaders } from './kernel/subscriptions/connection-headers.js';
/** Generated code, compiled only where the process allows it (`--disallow-code-generation-from-strings`). */
export { codeGenerationAllowed, compileGenerated } from './kernel/code-generation.js';
/** The envelop plugin type `PluginInstance.envelop` takes (any plugin from the envelop ecosystem). */
export type { Plugin as EnvelopPlugin } from '@envelop/core';

// Fetching
export type { EntityCallPart, JsonObject, SubgraphRequest, SubgraphResponse, Transport } from './kernel/fetch/subgraph-types.js';
/** Whether a subgraph call's variables carry uploaded files (GraphQL multipart request): plugins that key calls by their variables skip those. */
export { mayHoldUploads as carriesUploads } from './kernel/fetch/variables-json.js';
export { withEntityParts } from './kernel/execute/batch-call.js';
export type { GraphInfo, SubgraphConfig } from './kernel/graph/loaded-graph.js';
export type { Supergraph } from './kernel/graph/supergraph-model.js';

// Query plans
export type {
  FetchEntry,
  FetchNode,
  FlattenNode,
  ParallelNode,
  PathSegment,
  PlanNode,
  QueryPlan,
  RepresentationField,
  RepresentationSpec,
  SequenceNode,
} from './kernel/plan/query-plan.js';
export { printQueryPlan } from './kernel/plan/print-plan.js';

// Errors, logs, metrics
export {
  RouterError,
  pluginError,
  toErrorResponse,
  toGraphQLErrorJSON,
  type ErrorCode,
  type ErrorCodes,
  type GraphQLErrorJSON,
  type RouterErrorOptions,
} from './kernel/errors.js';
export type { ErrorCatalogue, ErrorSpec } from './kernel/error-catalogue.js';
export { createLogger, type Logger, type LoggerOptions } from './kernel/logger.js';
export { clientValue, cutString, MAX_CLIENT_VALUE_LENGTH } from './kernel/client-value.js';
/** Sets an own property, also for the key `__proto__` (a client may name a variable or alias so). */
export { setOwn } from './kernel/own-property.js';
export { splitUrlCredentials, stripUrlCredentials, type UrlWithoutCredentials } from './kernel/url-credentials.js';
export { formatBytes, readResponseText, ResponseTooLargeError } from './kernel/response-text.js';
export type { Counter, Gauge, GaugeAggregation, Histogram, HistogramSeries, Labels, Metrics, MetricSnapshot, ValueSeries } from './kernel/metrics/metrics.js';
export type { ClusterBus } from './kernel/cluster/cluster-bus.js';

// Configuration
export {
  ConfigError,
  byteSize,
  defaultConfig,
  defineConfigSection,
  duration,
  formatDuration,
  hostPort,
  loadConfigFile,
  parseConfig,
  parseConfigValue,
  parseDuration,
  readSection,
  regex,
  sectionPlugins,
  url,
  z,
  type ByteSizeOptions,
  type ByteSizeSchema,
  type ConfigIssue,
  type ConfigSection,
  type ConfigSectionContext,
  type CoreConfig,
  type CoreConfigInput,
  type DurationOptions,
  type DurationSchema,
  type HostPortOptions,
  type LoadedConfig,
  type ParseConfigValueOptions,
  type PluginEntryConfig,
  type SectionEnvSchemas,
  type SectionEnvValues,
  type UrlOptions,
} from './kernel/config/index.js';

// Composition
export { composeGraph, composeSubgraphs, type ComposedGraph, type SubgraphSdl } from './compose/index.js';
export { readGraphSource, type ExecutionConfig, type GraphSource, type SubgraphRecord } from './kernel/graph/execution-config.js';
