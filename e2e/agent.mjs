#!/usr/bin/env node
// agent.mjs PLAN_JSON
//
// Drives calls of agent skills with the official TypeScript SDK client for
// the Go end-to-end tests of the message service. The plan:
//   { "url": "...", "headers": {...}, "timeoutMs": 30000,
//     "sessions": [[{"name": "tool", "arguments": {...}, "progress": true,
//                    "abortOnProgress": true, "contextFromPrevious": true}]] }
// Each inner list runs in its own MCP session, one call after another.
// "progress" asks for notifications/progress; "abortOnProgress" cancels the
// call (notifications/cancelled) at its first progress notification;
// "contextFromPrevious" sets arguments.context_id to the mcpgate/context_id
// of the previous call's result (across sessions too).
// The report: { sessions: [[{name, result | error, progress: [...], ms,
//   aborted}]], error?: {stage, message} }, printed as one JSON line.
// Exit status: 0 when every session ran, 1 when one failed, 2 for a bad plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`agent.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}
const ms = plan.timeoutMs ?? 30000;
const report = { sessions: [], error: null };
let lastContext;

async function call(client, c) {
  const entry = { name: c.name, progress: [], aborted: false };
  const args = { ...(c.arguments ?? {}) };
  if (c.contextFromPrevious && lastContext !== undefined) args.context_id = lastContext;
  const abort = new AbortController();
  const opts = { timeout: ms, signal: abort.signal };
  if (c.progress || c.abortOnProgress) {
    opts.onprogress = (p) => {
      entry.progress.push(p);
      if (c.abortOnProgress && !entry.aborted) {
        entry.aborted = true;
        abort.abort('the host gave up');
      }
    };
  }
  const start = performance.now();
  try {
    entry.result = await client.callTool({ name: c.name, arguments: args }, undefined, opts);
    lastContext = entry.result?._meta?.['mcpgate/context_id'] ?? lastContext;
  } catch (e) {
    entry.error = { message: e?.message ?? String(e), code: e?.code, data: e?.data };
  }
  entry.ms = performance.now() - start;
  return entry;
}

async function session(calls) {
  const client = new Client({ name: 'mcpgate-e2e-agent', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } });
  await client.connect(transport, { timeout: ms });
  const out = [];
  for (const c of calls) out.push(await call(client, c));
  await transport.terminateSession().catch(() => {});
  await client.close().catch(() => {});
  return out;
}

let code = 0;
try {
  for (const calls of plan.sessions ?? []) report.sessions.push(await session(calls));
} catch (e) {
  report.error = { stage: `session ${report.sessions.length}`, message: e?.message ?? String(e) };
  code = 1;
}
// Exit once the report is written: a pipe takes 64 KiB before it blocks.
process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
