/**
 * Embeddings as OpenAI's answer carries them, for the adapters of providers
 * that answer in their own shape: the vectors checked, the token count read,
 * and OpenAI's `encoding_format: "base64"` (the openai SDK's default) — the
 * vector as little-endian float32 bytes, base64-encoded.
 */
export function float32Base64(values: readonly number[]): string {
  const f = Float32Array.from(values);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/**
 * An upstream's float vectors as OpenAI's answer carries them: exactly one per
 * input, each an array of finite numbers; undefined when they are not (the
 * caller's malformed answer, failed over like any other). Checked once here,
 * so a `null` or a string in a vector never reaches the client or the base64
 * encoder.
 */
export function checkedVectors(vectors: unknown, inputs: number): number[][] | undefined {
  if (!Array.isArray(vectors) || vectors.length !== inputs) return undefined;
  for (let i = 0; i < vectors.length; i++) {
    const v: unknown = vectors[i];
    if (!Array.isArray(v)) return undefined;
    for (let j = 0; j < v.length; j++) if (typeof v[j] !== 'number' || !Number.isFinite(v[j])) return undefined;
  }
  return vectors as number[][];
}
