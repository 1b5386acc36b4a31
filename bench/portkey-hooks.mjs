/**
 * Runs Portkey's published server with the @hono/node-server version this
 * project pins (1.13.5): Portkey's package brings its own newer copy, whose
 * streaming is broken for it. A resolve hook sends the bare specifier from
 * Portkey's bundle to the top-level copy.
 *
 *   node --import ./bench/portkey-hooks.mjs node_modules/@portkey-ai/gateway/build/start-server.js --port=N --headless
 */
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
      export async function resolve(specifier, context, next) {
        if ((specifier === '@hono/node-server' || specifier.startsWith('@hono/node-server/')) && context.parentURL && context.parentURL.includes('/@portkey-ai/gateway/')) {
          return next(specifier, { ...context, parentURL: ${JSON.stringify(new URL('../package.json', import.meta.url).href)} });
        }
        return next(specifier, context);
      }
    `),
);
