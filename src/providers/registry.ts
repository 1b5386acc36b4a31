/**
 * Provider type → adapter factory. The composition root (core/) builds one
 * adapter per configured provider from here; tests may override factories.
 */
import type { ProviderType } from '../config/types.js';
import type { AdapterFactory } from './types.js';
import { createAnthropicAdapter } from './anthropic/index.js';
import { createAzureAdapter } from './azure/index.js';
import { createCohereAdapter } from './cohere/index.js';
import { createGeminiAdapter } from './gemini/index.js';
import { createOllamaAdapter } from './ollama/index.js';
import { createOpenAIAdapter } from './openai/index.js';
import { createSimulatedAdapter } from './simulated/index.js';

export const ADAPTERS: Partial<Record<ProviderType, AdapterFactory>> = {
  anthropic: createAnthropicAdapter,
  azure: createAzureAdapter,
  cohere: createCohereAdapter,
  gemini: createGeminiAdapter,
  ollama: createOllamaAdapter,
  openai: createOpenAIAdapter,
  simulated: createSimulatedAdapter,
};
