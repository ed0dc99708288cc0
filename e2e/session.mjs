#!/usr/bin/env node
// session.mjs PLAN_JSON
//
// Holds one MCP session open with the official TypeScript SDK client while
// the Go end-to-end test changes the agent's tools through the management
// API, the way an MCP host keeps a session for hours. The plan:
//   { "url": "...", "headers": {...}, "timeoutMs": 15000,
//     "call": {"name": "tool", "arguments": {...}} }
// It connects, waits until its server→client (GET) stream is open, lists
// the tools and prints "ready". At the first notifications/tools/list_changed
// it lists again, calls plan.call and prints "called"; at the next one it
// lists again. Then it prints one JSON report:
//   { before: [names], added: [names], call: {result | error},
//     deleted: [names], notifications: n, error?: {stage, message} }.
// Every wait is bounded by timeoutMs. Exit status: 0 when every stage ran,
// 1 when one failed, 2 for a bad plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`session.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}
const ms = plan.timeoutMs ?? 15000;
const report = { before: null, added: null, call: null, deleted: null, notifications: 0, error: null };

// The GET stream is opened in the background after initialization; a
// notification sent before it is open would be lost, so "ready" waits for
// the stream's response headers.
let streamOpen;
const streamReady = new Promise((resolve) => { streamOpen = resolve; });
async function watchingFetch(url, init) {
  const res = await fetch(url, init);
  if ((init?.method ?? 'GET') === 'GET' && res.ok) streamOpen();
  return res;
}

// Notifications are counted; changeAfter(n) waits until more than n came.
let wake = () => {};
const client = new Client({ name: 'mcpgate-e2e-session', version: '1.0.0' }, { capabilities: {} });
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  report.notifications++;
  wake();
});

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function changeAfter(n) {
  const arrived = new Promise((resolve) => {
    wake = () => { if (report.notifications > n) resolve(); };
    wake();
  });
  return bounded(arrived, 'notifications/tools/list_changed');
}

async function listNames() {
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: ms });
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

async function callPlanned() {
  try {
    return { result: await client.callTool({ name: plan.call.name, arguments: plan.call.arguments ?? {} }, undefined, { timeout: ms }) };
  } catch (e) {
    return { error: { message: e?.message ?? String(e), code: e?.code } };
  }
}

let stage = 'initialize';
async function run() {
  const transport = new StreamableHTTPClientTransport(new URL(plan.url), {
    requestInit: { headers: plan.headers ?? {} },
    fetch: watchingFetch,
  });
  await client.connect(transport, { timeout: ms });
  stage = 'open the GET stream';
  await bounded(streamReady, 'GET stream');
  stage = 'list before';
  report.before = await listNames();
  process.stdout.write('ready\n');
  stage = 'first list_changed';
  await changeAfter(0);
  stage = 'list after the first change';
  report.added = await listNames();
  report.call = await callPlanned();
  const seen = report.notifications;
  process.stdout.write('called\n');
  stage = 'second list_changed';
  await changeAfter(seen);
  stage = 'list after the second change';
  report.deleted = await listNames();
  await transport.terminateSession().catch(() => {});
}

let code = 0;
try {
  await run();
} catch (e) {
  report.error = { stage, message: e?.message ?? String(e) };
  code = 1;
}
await client.close().catch(() => {});
// Exit once the report is written: a pipe takes 64 KiB before it blocks.
process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
