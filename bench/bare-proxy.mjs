/**
 * The floor: a bare pass-through proxy with undici — no routing, no parsing,
 * no observability. The request body is collected (chat bodies are small and
 * undici sends a buffer cheapest), and the response is streamed straight into
 * the client's response with `pool.stream()`, undici's cheapest path (no
 * intermediate Readable). Only the headers an upstream call needs are
 * forwarded.
 *
 *   UPSTREAM=http://127.0.0.1:PORT PORT=N node bench/bare-proxy.mjs
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.env.UPSTREAM, { connections: null, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts = [];
  req.on('data', (b) => parts.push(b));
  req.on('end', () => {
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    const headers = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
    pool.stream(
      { method: req.method, path: req.url, headers, body },
      ({ statusCode, headers: up }) => {
        const out = { 'content-type': up['content-type'] ?? 'application/json' };
        if (up['content-length'] !== undefined) out['content-length'] = up['content-length'];
        res.writeHead(statusCode, out);
        return res;
      },
      (err) => {
        if (!err) return;
        if (res.headersSent) res.destroy();
        else {
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"upstream failed"}}');
        }
      },
    );
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
// Exit normally on SIGTERM, so `--cpu-prof` can write its profile.
process.on('SIGTERM', () => process.exit(0));
