/**
 * The operations store shared by `switchyard operations` and the
 * `persisted-operations` router plugin: providers (directory, Redis, HTTP),
 * the registry and manifest logic, the push file formats, and the
 * persisted-query request protocol. Layout and formats: docs/persisted-operations.md.
 */
export { DirectoryStorage, type DirectoryStorageOptions } from './directory-storage.js';
export { CommandTimeoutError, REDIS_COMMAND_TIMEOUT_MS, STORE_FILE_TIMEOUT_MS, withTimeout } from './command-timeout.js';
export { HttpStorage, MAX_MANIFEST_FILE_BYTES, MAX_OPERATION_FILE_BYTES, httpStoreUrlProblem, type HttpStorageOptions } from './http-storage.js';
export { ManifestFormatError, newRevision, parseManifest, parseManifestInSlices, serializeManifest, type OperationsManifest } from './manifest.js';
export { normalizeDocument, normalizeOperation, normalizedId } from './normalize.js';
export { isSha256Hex, sha256Hex } from './operation-id.js';
export { OperationFileError, parseOperationFile, readOperationFiles, type OperationFile, type OperationFileFormat } from './operation-files.js';
export {
  OperationsStore,
  OperationsStoreError,
  type ManifestRead,
  type OperationInput,
  type OperationsStoreOptions,
  type PushedOperation,
  type RegisteredOperation,
  type ResolvedOperation,
} from './operations-store.js';
export {
  DEFAULT_STORE_PATH,
  STORE_ENV_VARIABLE,
  openOperationsStorage,
  openOperationsStore,
  parseStoreLocation,
  type OpenStoreOptions,
  type StoreLocation,
} from './open-store.js';
export {
  NOT_FOUND_CACHE_CONTROL,
  answerUnlessResolved,
  errorResponse,
  persistedQueryNotFound,
  persistedQueryResolved,
  readPersistedQuery,
  type PersistedQueryRead,
} from './persisted-query.js';
export type { OperationType, Registry, RegistryClient, RegistryEntry } from './registry.js';
export { keyProblem, manifestPath, nameProblem, operationPath, registryPath } from './store-layout.js';
export { ReadOnlyStoreError, type ConditionalRead, type OperationsStorage, type StorageChange } from './storage.js';
export type { RedisStorageOptions } from './redis-storage.js';
