/**
 * OpenAI's `encoding_format: "base64"` (the openai SDK's default): the vector as
 * little-endian float32 bytes, base64-encoded. Adapters of providers that only
 * return float arrays encode with this.
 */
export function float32Base64(values: readonly number[]): string {
  const f = Float32Array.from(values);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}
