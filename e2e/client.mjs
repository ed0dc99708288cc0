#!/usr/bin/env node
// client.mjs PLAN_JSON
//
// Drives an MCP server with the official TypeScript SDK client, as an MCP
// host would, and prints one JSON report on stdout for the Go end-to-end
// tests to check. The plan:
//   { "url": "...", "headers": {"Authorization": "Bearer ..."},
//     "calls": [{"name": "tool", "arguments": {...}, "progress": true}],
//     "delete": true,
//     "elicitation": {"action": "accept", "content": {...}},
//     "sampling": {"role": "assistant", "content": {...}, "model": "m"} }
// With "elicitation" or "sampling" the client declares that capability and
// answers every such request of the server with the given result.
// The report: { server, pages: [[names...]...], tools: [...],
//   calls: [{name, result | error, progress: [...]}], notifications: [...],
//   sessionDelete: "ok" | {error}, error?: {stage, message, code} }.
// Exit status: 0 when every stage ran (tool errors are reported, not
// fatal), 1 when a stage failed, 2 for a bad plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`client.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}

const report = { server: null, pages: [], tools: [], calls: [], notifications: [], sessionDelete: null, error: null };

function fail(stage, e) {
  report.error = { stage, message: e?.message ?? String(e) };
  if (e && e.code !== undefined) report.error.code = e.code;
  if (e && e.data !== undefined) report.error.data = e.data;
}

// finish prints the report and exits once it is written (a pipe takes 64
// KiB at a time, and exiting sooner would cut a large report off); the
// promise it returns never settles, so `await finish(…)` ends the script.
function finish(code) {
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
  return new Promise(() => {});
}

const capabilities = {};
if (plan.elicitation) capabilities.elicitation = {};
if (plan.sampling) capabilities.sampling = {};
const client = new Client({ name: 'mcpgate-e2e', version: '1.0.0' }, { capabilities });
if (plan.elicitation) client.setRequestHandler(ElicitRequestSchema, async () => plan.elicitation);
if (plan.sampling) client.setRequestHandler(CreateMessageRequestSchema, async () => plan.sampling);
client.fallbackNotificationHandler = async (n) => { report.notifications.push(n); };
client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => { report.notifications.push(n); });
const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } });
const timeout = { timeout: plan.timeoutMs ?? 30000 };

try {
  await client.connect(transport, timeout);
} catch (e) {
  fail('initialize', e);
  await finish(1);
}
report.server = {
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  serverInfo: client.getServerVersion() ?? null,
  capabilities: client.getServerCapabilities() ?? null,
  instructions: client.getInstructions() ?? null,
};

async function run() {
  await client.ping(timeout);
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, timeout);
    report.pages.push(page.tools.map((t) => t.name));
    report.tools.push(...page.tools);
    cursor = page.nextCursor;
    if (report.pages.length > 100) throw new Error('more than 100 pages of tools');
  } while (cursor !== undefined);
  for (const c of plan.calls ?? []) {
    const entry = { name: c.name, progress: [] };
    const opts = { ...timeout };
    if (c.progress) opts.onprogress = (p) => entry.progress.push(p);
    try {
      entry.result = await client.callTool({ name: c.name, arguments: c.arguments ?? {} }, undefined, opts);
    } catch (e) {
      entry.error = { message: e?.message ?? String(e), code: e?.code, data: e?.data };
    }
    report.calls.push(entry);
  }
}

let code = 0;
try {
  await run();
} catch (e) {
  fail('run', e);
  code = 1;
}
if (plan.delete !== false && transport.sessionId) {
  try {
    await transport.terminateSession();
    report.sessionDelete = 'ok';
  } catch (e) {
    report.sessionDelete = { error: e?.message ?? String(e) };
    code = 1;
  }
}
await client.close().catch(() => {});
await finish(code);
