/**
 * A chat request's options (what it asks of the answer, beside its messages and
 * tools), checked as OpenAI's API reference gives them: a value OpenAI refuses with
 * 400 is refused here too, whoever would have served it (an OpenAI-compatible server
 * that takes anything, the simulated provider, a native adapter that reads only
 * what it can map).
 *
 * Enumerations that grow with new models (`reasoning_effort`, `service_tier`,
 * `verbosity`, `prompt_cache_retention`, `modalities`, audio formats and voices) are
 * checked as strings only, so a new value reaches the upstream that knows it. An
 * absent field costs one `!== undefined`; unknown fields are left to the upstream.
 */
import { invalidRequest } from '../core/errors.js';
import { badName, isName, isObj, optBoolean, optNumber, optObject, optString } from './field-checks.js';

/**
 * OpenAI's three, and the structured outputs of OpenAI-compatible servers the gateway
 * fronts: vLLM's and SGLang's `structural_tag`, Fireworks' `grammar` (native adapters
 * refuse both, and the request passes to a candidate that takes it).
 */
const RESPONSE_FORMATS: ReadonlySet<string> = new Set(['text', 'json_object', 'json_schema', 'structural_tag', 'grammar']);
/** `logit_bias` keys are token ids: OpenAI refuses any other key ("You should only be submitting non-negative integers"). */
const TOKEN_ID = /^\d+$/;
/** OpenAI's limits on `metadata`: 16 pairs, keys of at most 64 characters, string values of at most 512. */
const METADATA_PAIRS = 16;
const METADATA_KEY_CHARS = 64;
const METADATA_VALUE_CHARS = 512;
/** OpenAI's limit on `safety_identifier`. */
const SAFETY_IDENTIFIER_CHARS = 64;

export function checkChatOptions(body: Record<string, unknown>): void {
  const stream = body.stream;
  optBoolean(stream, 'stream');
  if (body.stream_options !== undefined && body.stream_options !== null) checkStreamOptions(body.stream_options, stream);
  optNumber(body.max_tokens, 'max_tokens', 1, 10_000_000, true);
  optNumber(body.max_completion_tokens, 'max_completion_tokens', 1, 10_000_000, true);
  optNumber(body.temperature, 'temperature', 0, 2);
  optNumber(body.top_p, 'top_p', 0, 1);
  optNumber(body.n, 'n', 1, 128, true);
  optNumber(body.presence_penalty, 'presence_penalty', -2, 2);
  optNumber(body.frequency_penalty, 'frequency_penalty', -2, 2);
  optNumber(body.seed, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  checkStop(body.stop);
  optBoolean(body.logprobs, 'logprobs');
  if (body.top_logprobs !== undefined && body.top_logprobs !== null) checkTopLogprobs(body.top_logprobs, body.logprobs);
  if (body.logit_bias !== undefined && body.logit_bias !== null) checkLogitBias(body.logit_bias);
  if (body.response_format !== undefined && body.response_format !== null) checkResponseFormat(body.response_format);
  if (body.modalities !== undefined && body.modalities !== null) checkModalities(body.modalities);
  if (body.audio !== undefined && body.audio !== null) checkAudio(body.audio);
  if (body.prediction !== undefined && body.prediction !== null) checkPrediction(body.prediction);
  if (body.metadata !== undefined && body.metadata !== null) checkMetadata(body.metadata);
  if (body.web_search_options !== undefined && body.web_search_options !== null) checkWebSearchOptions(body.web_search_options);
  optBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  optBoolean(body.store, 'store');
  optString(body.user, 'user');
  optString(body.safety_identifier, 'safety_identifier', SAFETY_IDENTIFIER_CHARS);
  optString(body.prompt_cache_key, 'prompt_cache_key');
  optString(body.prompt_cache_retention, 'prompt_cache_retention');
  optString(body.service_tier, 'service_tier');
  optString(body.reasoning_effort, 'reasoning_effort');
  optString(body.verbosity, 'verbosity');
}

/** `stop`: a string or an array of strings (adapters map each to the provider's stop sequences). */
function checkStop(stop: unknown): void {
  if (stop === undefined || stop === null || typeof stop === 'string') return;
  if (Array.isArray(stop) && stop.every(isString)) return;
  throw invalidRequest("'stop' must be a string or an array of strings", 'stop');
}

/** OpenAI: "The 'stream_options' parameter is only allowed when 'stream' is enabled." */
function checkStreamOptions(options: unknown, stream: unknown): void {
  if (!isObj(options)) throw invalidRequest("'stream_options' must be an object", 'stream_options');
  if (stream !== true) throw invalidRequest("'stream_options' is only allowed when 'stream' is true", 'stream_options');
  optBoolean(options.include_usage, 'stream_options.include_usage');
  optBoolean(options.include_obfuscation, 'stream_options.include_obfuscation');
}

/** 0 to 20 alternatives a token, and (for any but 0) only with `logprobs: true`, as OpenAI's reference requires. */
function checkTopLogprobs(top: unknown, logprobs: unknown): void {
  optNumber(top, 'top_logprobs', 0, 20, true);
  if ((top as number) > 0 && logprobs !== true) throw invalidRequest("'top_logprobs' requires 'logprobs' to be true", 'top_logprobs');
}

function checkLogitBias(bias: unknown): void {
  if (!isObj(bias)) throw invalidRequest("'logit_bias' must be an object mapping token ids to numbers between -100 and 100", 'logit_bias');
  for (const token in bias) {
    if (!TOKEN_ID.test(token)) throw invalidRequest("'logit_bias' keys must be token ids (non-negative integers)", 'logit_bias');
    const b = bias[token];
    if (typeof b !== 'number' || !(b >= -100 && b <= 100)) throw invalidRequest("'logit_bias' values must be numbers between -100 and 100", 'logit_bias');
  }
}

/** Adapters read `type`, and build the provider's schema from `json_schema.schema`. */
function checkResponseFormat(format: unknown): void {
  if (!isObj(format) || typeof format.type !== 'string') throw invalidRequest("'response_format' must be an object with a 'type'", 'response_format');
  const type = format.type;
  if (!RESPONSE_FORMATS.has(type)) {
    throw invalidRequest("response_format.type must be 'text', 'json_object' or 'json_schema' (or an OpenAI-compatible server's 'structural_tag' or 'grammar')", 'response_format.type');
  }
  if (type !== 'json_schema') return;
  const spec = format.json_schema;
  if (!isObj(spec)) throw invalidRequest("response_format.json_schema must be an object with a 'name', as type 'json_schema' requires", 'response_format.json_schema');
  const name = spec.name;
  if (typeof name !== 'string') throw invalidRequest('response_format.json_schema.name is required and must be a string', 'response_format.json_schema.name');
  if (!isName(name)) throw badName('response_format.json_schema.name');
  optObject(spec.schema, 'response_format.json_schema.schema');
  optBoolean(spec.strict, 'response_format.json_schema.strict');
  optString(spec.description, 'response_format.json_schema.description');
}

function checkModalities(modalities: unknown): void {
  if (!Array.isArray(modalities) || !modalities.every(isString)) throw invalidRequest("'modalities' must be an array of strings, such as ['text', 'audio']", 'modalities');
}

/** Audio output: a format and a voice (a built-in voice's name, or a custom voice's `{id}`), both required. */
function checkAudio(audio: unknown): void {
  if (!isObj(audio)) throw invalidRequest("'audio' must be an object with 'format' and 'voice'", 'audio');
  if (typeof audio.format !== 'string') throw invalidRequest('audio.format is required and must be a string', 'audio.format');
  const voice = audio.voice;
  if (typeof voice !== 'string' && !(isObj(voice) && typeof voice.id === 'string')) {
    throw invalidRequest("audio.voice is required: a voice's name, or {id} for a custom voice", 'audio.voice');
  }
}

/** Predicted output: `{type: 'content', content}`, the content a string or text parts. */
function checkPrediction(prediction: unknown): void {
  if (!isObj(prediction) || typeof prediction.type !== 'string') throw invalidRequest("'prediction' must be an object with a 'type'", 'prediction');
  const content = prediction.content;
  if (prediction.type === 'content' && typeof content !== 'string' && !(Array.isArray(content) && content.every(isTextPart))) {
    throw invalidRequest('prediction.content must be a string or an array of text parts', 'prediction.content');
  }
}

/** Neither keys nor values are echoed: they are the client's data. */
function checkMetadata(metadata: unknown): void {
  if (!isObj(metadata)) throw invalidRequest("'metadata' must be an object of string values", 'metadata');
  let pairs = 0;
  for (const key in metadata) {
    if (++pairs > METADATA_PAIRS) throw invalidRequest(`'metadata' may hold at most ${METADATA_PAIRS} pairs`, 'metadata');
    if (key.length > METADATA_KEY_CHARS) throw invalidRequest(`'metadata' keys must be at most ${METADATA_KEY_CHARS} characters`, 'metadata');
    const value = metadata[key];
    if (typeof value !== 'string' || value.length > METADATA_VALUE_CHARS) {
      throw invalidRequest(`'metadata' values must be strings of at most ${METADATA_VALUE_CHARS} characters`, 'metadata');
    }
  }
}

function checkWebSearchOptions(options: unknown): void {
  if (!isObj(options)) throw invalidRequest("'web_search_options' must be an object", 'web_search_options');
  optString(options.search_context_size, 'web_search_options.search_context_size');
  optObject(options.user_location, 'web_search_options.user_location');
}

const isString = (v: unknown): boolean => typeof v === 'string';
const isTextPart = (p: unknown): boolean => isObj(p) && p.type === 'text' && typeof p.text === 'string';
