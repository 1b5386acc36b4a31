/**
 * A second floor (optional path `parsing`): the bare proxy plus the least any
 * gateway that routes on the request must do. It decodes and parses the body
 * (the model decides the route), writes the upstream's model into it, sends it
 * with undici's lowest-level call (`dispatch`, as Switchyard does), buffers the
 * answer (a gateway that fails over must see a whole answer before committing
 * it; a stream is piped as the bare proxy pipes it) and adds the six routing
 * headers the contract requires. No validation,
 * routing, limits, breakers, traces or metrics: the gap between this path and
 * Switchyard is what those cost; the gap between it and the bare proxy is what
 * parsing and buffering cost.
 *
 *   UPSTREAM=http://127.0.0.1:PORT UPSTREAM_KEY=… UPSTREAM_MODEL=… PORT=N node bench/parsing-proxy.mjs
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.env.UPSTREAM, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
const upstreamHeaders = { 'content-type': 'application/json', authorization: `Bearer ${process.env.UPSTREAM_KEY}` };
const model = process.env.UPSTREAM_MODEL;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Collects one answer and writes it to the client with the routing headers. */
class Answer {
  constructor(res, t0, stream) {
    this.res = res;
    this.t0 = t0;
    this.stream = stream;
    this.parts = [];
    this.status = 0;
  }
  onConnect() {}
  onHeaders(status) {
    this.status = status;
    if (this.stream) this.res.writeHead(status, this.head('text/event-stream'));
    return true;
  }
  onData(chunk) {
    if (this.stream) this.res.write(chunk);
    else this.parts.push(chunk);
    return true;
  }
  onComplete() {
    if (this.stream) {
      this.res.end();
      return;
    }
    const body = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
    this.res.writeHead(this.status, ['content-length', body.length, ...this.head('application/json')]);
    this.res.end(body);
  }
  head(contentType) {
    return [
      'content-type', contentType,
      'x-request-id', randomUUID(),
      'x-switchyard-deployment', `mock/${model}`,
      'x-switchyard-selection', 'weighted',
      'x-switchyard-attempts', 1,
      'x-switchyard-fallback', 'false',
      'x-switchyard-overhead-ms', (performance.now() - this.t0).toFixed(3),
    ];
  }
  onError() {
    if (this.res.headersSent) this.res.destroy();
    else {
      this.res.writeHead(502, { 'content-type': 'application/json' });
      this.res.end('{"error":{"message":"upstream failed"}}');
    }
  }
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const parts = [];
  req.on('data', (b) => parts.push(b));
  req.on('end', () => {
    const t0 = performance.now();
    let request;
    try {
      request = JSON.parse(utf8.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts)));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"malformed JSON"}}');
      return;
    }
    request.model = model;
    pool.dispatch({ method: 'POST', path: '/v1/chat/completions', headers: upstreamHeaders, body: JSON.stringify(request) }, new Answer(res, t0, request.stream === true));
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1');
// Exit normally on SIGTERM, so `--cpu-prof` can write its profile.
process.on('SIGTERM', () => process.exit(0));
