/**
 * The files of a gRPC subgraph, for plugins that serve one: `mapping.json`
 * (how the service implements the GraphQL schema, Cosmo's format) and the
 * generated `service.proto` loaded into protobufjs reflection. Generation
 * itself is the CLI's (`switchyard grpc-service generate`, docs/grpc.md).
 */
export {
  parseGrpcMapping,
  type EntityMapping,
  type FieldMapping,
  type GrpcMapping,
  type OperationMapping,
  type RequiredFieldMapping,
  type ResolveMapping,
} from './mapping.js';
export { findService, loadProto, type LoadedProto } from './proto-root.js';
export { OPERATION_FILE_EXTENSIONS } from './operations-service.js';
export { checkMessageFields, snakeCase, type MessageFieldsContext } from './message-fields.js';
