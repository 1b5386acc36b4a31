/**
 * Where a JSON text stops being JSON, for the errors V8 gives no position for
 * ("Unexpected token ']'" after a trailing comma, a misspelt literal, "Unexpected
 * end of JSON input"). The position is all a config error may say about the source:
 * V8's own excerpt of it can hold a secret (load.ts drops it). jsonc-parser (VS Code's
 * JSON parser) reports where each error starts, set to JSON's strict grammar here.
 */
import { parse, type ParseError } from 'jsonc-parser';

const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false } as const;

/** The UTF-16 offset of the first error in `text`; undefined when none is found (or the file nests too deep to scan). */
export function jsonErrorOffset(text: string): number | undefined {
  const errors: ParseError[] = [];
  try {
    parse(text, errors, STRICT);
  } catch (err) {
    // It recurses: a file nested some hundred thousand deep overflows the stack. Such a file gets no position.
    if (err instanceof RangeError) return undefined;
    throw err;
  }
  return errors[0]?.offset;
}
