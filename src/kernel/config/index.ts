/** Configuration: `router.config.yaml`, environment overrides and the schema helpers plugins use. */

export { ConfigError, formatConfigIssue, readableIssueMessage, type ConfigErrorOptions, type ConfigIssue } from './config-error.js';
export {
  CORS_METHODS,
  LOG_LEVELS,
  coreConfigSchema,
  coreConfigShape,
  headerRuleSchema,
  type CoreConfig,
  type CoreConfigInput,
  type CorsConfig,
  type CorsMethod,
  type EngineConfig,
  type HeaderRule,
  type HeadersConfig,
  type LimitsConfig,
  type LogLevel,
  type MetricsConfig,
  type PluginEntryConfig,
  type SharedStoreProviderConfig,
  type TrafficShapingConfig,
} from './core-schema.js';
export { formatByteSize, parseByteSize, tryParseByteSize } from './byte-size.js';
export { formatDuration, parseDuration, tryParseDuration, type ParseResult } from './duration.js';
export {
  applyEnvOverrides,
  envBindings,
  envVariableName,
  type EnvApplication,
  type EnvBinding,
  type EnvBindingsOptions,
  type EnvScalarKind,
  type EnvSource,
  type EnvValueKind,
} from './env.js';
export {
  defineConfigSection,
  readSection,
  sectionPlugins,
  type ConfigSection,
  type ConfigSectionContext,
  type SectionEnvSchemas,
  type SectionEnvValues,
} from './config-section.js';
export {
  buildConfigSchema,
  defaultConfig,
  loadConfigFile,
  parseConfig,
  parseConfigText,
  parseConfigValue,
  type ConfigSchema,
  type LoadedConfig,
  type ParseConfigOptions,
  type ParseConfigTextOptions,
  type ParseConfigValueOptions,
} from './load-config.js';
export {
  byteSize,
  duration,
  hostPort,
  regex,
  url,
  z,
  type ByteSizeOptions,
  type ByteSizeSchema,
  type DurationOptions,
  type DurationSchema,
  type HostPortOptions,
  type UrlOptions,
} from './schema-helpers.js';
