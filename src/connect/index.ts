/**
 * Connect contracts: named GraphQL operations served as Connect RPCs.
 * Generation (`switchyard grpc-service generate --connect-contract`) and the
 * pieces the `connect` plugin serves them with (docs/connect.md).
 */
export { compileContract, type CompileContractOptions, type CompiledContract } from './compile-contract.js';
export { CONTRACT_FILES, writeContractFiles, type WriteContractFilesOptions, type WrittenContract } from './contract-files.js';
export {
  contractError,
  isOperationFile,
  OPERATION_EXTENSIONS,
  parseContractOperation,
  parseOperationFiles,
  readContractOperations,
  type ContractOperation,
} from './contract-operations.js';
export { contractNamesFor, type ContractNames } from './contract-package.js';
export { jsonNameOf, loadContractProto, type ContractProto } from './contract-proto.js';
export { CONNECT_CODES, GRAPHQL_ERRORS_HEADER, openApiDocument, type OpenApiOptions } from './openapi-document.js';
