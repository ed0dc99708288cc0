#!/usr/bin/env node
// tasks.mjs PLAN_JSON
//
// Runs a tool call as an MCP task (the 2025-11-25 tasks utility) with the
// official TypeScript SDK client, then fetches the same task from a second
// connection, as a host that comes back for a long call would. The plan:
//   { "url": "...", "headers": {...}, "tool": "name", "arguments": {...},
//     "timeoutMs": 30000 }
// It prints one JSON report: { capability, taskSupport, stream: [types],
//   taskId, streamResult, other: {status, result, listed}, error? }.
// Exit status: 0 when every stage ran, 1 when one failed, 2 for a bad plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`tasks.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}
const report = { capability: null, taskSupport: null, stream: [], taskId: null, streamResult: null, other: null, error: null };
const timeout = { timeout: plan.timeoutMs ?? 30000 };

function finish(code) {
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
  return new Promise(() => {});
}

async function connect() {
  const client = new Client({ name: 'mcpgate-e2e-tasks', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } }), timeout);
  return client;
}

let stage = 'first connection';
try {
  const first = await connect();
  report.capability = first.getServerCapabilities()?.tasks ?? null;
  stage = 'tools/list';
  const tools = await first.listTools(undefined, timeout);
  report.taskSupport = tools.tools.find((t) => t.name === plan.tool)?.execution?.taskSupport ?? null;
  stage = 'task stream';
  const params = { name: plan.tool, arguments: plan.arguments ?? {} };
  for await (const m of first.experimental.tasks.callToolStream(params, CallToolResultSchema, { ...timeout, task: { ttl: 60000 } })) {
    report.stream.push(m.type);
    if (m.type === 'taskCreated') report.taskId = m.task.taskId;
    if (m.type === 'result') report.streamResult = m.result;
    if (m.type === 'error') throw m.error;
  }
  stage = 'second connection';
  const second = await connect();
  const tasks = second.experimental.tasks;
  const got = await tasks.getTask(report.taskId, timeout);
  const result = await tasks.getTaskResult(report.taskId, CallToolResultSchema, timeout);
  const listed = (await tasks.listTasks(undefined, timeout)).tasks.map((t) => t.taskId);
  report.other = { status: got.status, result, listed };
  await finish(0);
} catch (e) {
  report.error = { stage, message: e?.message ?? String(e), code: e?.code };
  await finish(1);
}
