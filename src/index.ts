/**
 * The package entry: route in-process with createGateway(), or run the whole
 * server with startSwitchyard().
 */
export { createGateway } from './core/gateway.js';
export type { Gateway, GatewayOptions, CallOptions, ChatResponse, ChatStreamResponse, EmbeddingsResult } from './core/gateway.js';
export { startSwitchyard } from './core/start.js';
export type { RunningSwitchyard, StartOptions } from './core/start.js';
export type { RoutingMeta } from './core/request-meta.js';
export { GatewayError } from './core/errors.js';
export { systemClock, type Clock } from './core/clock.js';
export { parseConfig, applyOverrides } from './config/parse.js';
export { loadConfig } from './config/load.js';
export { ConfigError } from './config/errors.js';
export type * from './config/types.js';
export type * from './protocol/openai.js';
export { EventBus } from './observability/events.js';
export type { TraceRecord, AttemptTrace, GatewayEventMap } from './observability/events.js';
export type { ProviderAdapter, AdapterFactory, ChunkStream } from './providers/types.js';
