/** Composition: `router.compose.yaml` -> supergraph -> `router.execution.config.json` or supergraph SDL. */
export {
  parseComposeFile,
  readComposeFile,
  type ComposeFile,
  type ComposeSubgraph,
  type GrpcSubgraph,
  type IntrospectionSubgraph,
  type SchemaFileSubgraph,
} from './compose-file.js';
export { introspectSubgraph, type IntrospectOptions } from './introspect.js';
export {
  composeGraph,
  composeSubgraphs,
  type SubgraphSdl,
  formatCompositionProblems,
  type ComposeGraphOptions,
  type ComposedGraph,
  type CompositionProblem,
} from './compose.js';
export {
  createExecutionConfig,
  outputFormatOf,
  renderOutput,
  writeOutput,
  type OutputFormat,
  type OutputOptions,
} from './write-output.js';
