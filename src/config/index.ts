/** The configuration subsystem: schema → frozen typed Config, loader, ${VAR} interpolation. */
export type * from './types.js';
export { ConfigError, isConfigError } from './errors.js';
export { DEFAULTS, DEFAULT_AZURE_API_VERSION, DEFAULT_BASE_URLS, DEFAULT_LOCALITY } from './defaults.js';
export { ConfigSchema, PROVIDER_TYPES, STRATEGIES, CAPABILITIES, DATA_CLASSES, FAULT_KINDS } from './schema.js';
export { interpolate, type Env, type Interpolation } from './interpolate.js';
export { parseConfig, applyOverrides, isParsedConfig, type ParseOptions } from './parse.js';
export {
  loadConfig,
  readConfigFile,
  resolveConfigPath,
  DEMO_CONFIG_PATH,
  type LoadOptions,
  type LoadedConfig,
  type ConfigOrigin,
} from './load.js';
export type { CliOverrides } from './overrides.js';
export { isLoopbackHost } from './loopback.js';
export { configWarnings } from './warnings.js';
