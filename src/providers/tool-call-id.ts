/**
 * Tool call ids for providers whose answers carry none (Gemini, Ollama; a
 * Cohere call that came without one): shaped as OpenAI's (`call_` and 24
 * letters and digits) and random, so no two calls of a conversation share one. Numbering the calls of each answer (`call_0`,
 * `call_1`) repeated the same ids in every turn: clients that keep tool state by
 * id mixed turns up, and Anthropic refuses a history whose ids repeat.
 */
import type { Random } from '../core/clock.js';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function toolCallIdMaker(random: Random): () => string {
  return () => {
    let id = 'call_';
    for (let i = 0; i < 24; i++) id += ID_ALPHABET[Math.floor(random() * ID_ALPHABET.length)];
    return id;
  };
}
