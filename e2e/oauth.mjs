#!/usr/bin/env node
// oauth.mjs PLAN_JSON
//
// Adds an MCP server by URL alone, as an MCP host does: the official
// TypeScript SDK client with its own OAuthClientProvider starts without a
// token, discovers the authorization server, registers, and sends the user
// to the authorize URL. That URL is printed as one JSON line,
//   {"authorize": "https://..."}
// for the Go test to open in a browser; the authorization server then
// redirects to this script's loopback callback server, which takes the
// code. The script finishes the token exchange, lists and calls tools,
// forces a refresh (the refresh_token grant through the SDK), lists and
// calls again with the new token, and prints one JSON line,
//   {"report": {...}}
// The plan:
//   { "url": "...", "calls": [{"name": "tool", "arguments": {...}}],
//     "resource": "...", "reauthorize": false, "timeoutMs": 60000 }
// resource, when set, is the resource indicator (RFC 8707) to ask for in
// place of the one the protected resource metadata names.
// With "reauthorize": true the script then drops its tokens, keeps its
// registration and authorizes again (a second authorize line), which the
// gateway should answer at once for a signed-in user who consented
// before; it exchanges that code too and lists and calls once more.
// When the user denies, the report holds the callback's error and the
// state sent, and nothing else. Exit status: 0 when every stage ran, 1
// when one failed (the report says which), 2 for a bad plan.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`oauth.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}
const timeoutMs = plan.timeoutMs ?? 60000;
const serverUrl = new URL(plan.url);

const report = {
  unauthorized: null, // the first connect's error, which must be UnauthorizedError
  // per authorization: {url, stateSent, callback}, where callback is the
  // query the authorization server redirected with
  authorizations: [],
  issuer: null, // the authorization server metadata's issuer
  client: null, // what dynamic registration returned
  tokens: [], // every token response, in order
  sessions: [], // per connection: {tools: [...names], calls: [{name, result | error}]}
  refresh: null, // the result of the forced refresh
  error: null,
};

// emit writes one JSON line on stdout; a pipe may take it in parts, so
// the returned promise settles once it is written.
function emit(obj) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(obj) + '\n', resolve));
}

// finish prints the report and exits; the promise it returns never settles.
async function finish(code) {
  await emit({ report });
  process.exit(code);
  return new Promise(() => {});
}

function fail(stage, e) {
  report.error = { stage, message: e?.message ?? String(e) };
  if (e?.code !== undefined) report.error.code = e.code;
}

// callbackServer listens on a loopback port for authorization responses;
// next() returns a promise of the next one's query parameters.
function callbackServer() {
  const waiting = [];
  const arrived = [];
  const deliver = (q) => (waiting.length ? waiting.shift()(q) : arrived.push(q));
  const next = () => (arrived.length ? Promise.resolve(arrived.shift()) : new Promise((resolve) => waiting.push(resolve)));
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>mcpgate e2e</title><p id="done">You may close this window.</p>');
    deliver(Object.fromEntries(u.searchParams));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, next, port: server.address().port }));
  });
}

// MemoryProvider is an OAuthClientProvider that keeps everything in
// memory for one run: a public client (PKCE, no secret) with a loopback
// redirect URI, as desktop MCP hosts register.
class MemoryProvider {
  constructor(redirectUrl, resource) {
    this._redirectUrl = redirectUrl;
    if (resource) this.validateResourceURL = async () => new URL(resource);
  }
  get redirectUrl() { return this._redirectUrl; }
  get clientMetadata() {
    return {
      client_name: 'mcpgate e2e (TypeScript SDK)',
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    this._state = randomBytes(16).toString('base64url');
    return this._state;
  }
  clientInformation() { return this._client; }
  saveClientInformation(info) {
    this._client = info;
    report.client = info;
  }
  tokens() { return this._tokens; }
  saveTokens(tokens) {
    this._tokens = tokens;
    report.tokens.push(tokens);
  }
  async redirectToAuthorization(url) {
    report.authorizations.push({ url: url.href, stateSent: this._state ?? null, callback: null });
    await emit({ authorize: url.href });
  }
  dropTokens() { this._tokens = undefined; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  saveDiscoveryState(s) {
    this._discovery = s;
    report.issuer = s.authorizationServerMetadata?.issuer ?? null;
  }
  discoveryState() { return this._discovery; }
}

// session connects a new client with the provider's token, lists every
// tool, makes the plan's calls, ends the session and records it all.
async function session(provider) {
  const client = new Client({ name: 'mcpgate-e2e-oauth', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  const opts = { timeout: timeoutMs };
  const entry = { tools: [], calls: [] };
  report.sessions.push(entry);
  await client.connect(transport, opts);
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, opts);
    entry.tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  for (const c of plan.calls ?? []) {
    try {
      entry.calls.push({ name: c.name, result: await client.callTool({ name: c.name, arguments: c.arguments ?? {} }, undefined, opts) });
    } catch (e) {
      entry.calls.push({ name: c.name, error: { message: e?.message ?? String(e), code: e?.code } });
    }
  }
  await transport.terminateSession();
  await client.close();
}

// withTimeout rejects when p has not settled within timeoutMs.
function withTimeout(p, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs); });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

// authorize runs the first, unauthenticated connect, which must end in a
// redirect to the authorize URL, waits for the callback and returns the
// transport and the callback's query.
async function authorize(provider, callback) {
  const client = new Client({ name: 'mcpgate-e2e-oauth', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  try {
    await client.connect(transport, { timeout: timeoutMs });
    throw new Error('connected without authorization');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    report.unauthorized = e.message;
  }
  const a = report.authorizations.at(-1);
  if (!a) throw new Error('the client did not redirect to the authorization server');
  a.callback = await withTimeout(callback.next(), 'the authorization callback');
  return { transport, query: a.callback };
}

// authorizeAndConnect authorizes, exchanges the code and runs a session;
// it returns false when the user denied.
async function authorizeAndConnect(provider, callback, stages) {
  stages.stage = 'authorize';
  const { transport, query } = await authorize(provider, callback);
  if (query.error || !query.code) return false;
  stages.stage = 'token';
  await transport.finishAuth(query.code);
  stages.stage = 'session';
  await session(provider);
  return true;
}

async function main() {
  const callback = await callbackServer();
  const provider = new MemoryProvider(`http://127.0.0.1:${callback.port}/callback`, plan.resource);
  const stages = { stage: '' };
  try {
    if (!(await authorizeAndConnect(provider, callback, stages))) return 0;
    stages.stage = 'refresh';
    report.refresh = await auth(provider, { serverUrl });
    stages.stage = 'session after refresh';
    await session(provider);
    if (plan.reauthorize) {
      provider.dropTokens();
      await authorizeAndConnect(provider, callback, stages);
    }
    return 0;
  } catch (e) {
    fail(stages.stage, e);
    return 1;
  } finally {
    callback.server.close();
  }
}

await finish(await main());
