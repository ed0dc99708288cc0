#!/usr/bin/env node
// confirm.mjs PLAN_JSON
//
// Calls one tool with the official TypeScript SDK client, as an MCP host
// whose user is asked to confirm it: the client declares the elicitation
// capability (unless the plan says elicitation: false) and answers every
// elicitation/create with the plan's answer. Prints one JSON report on
// stdout for the Go end-to-end tests. The plan:
//   { "url": "...", "headers": {...}, "call": {"name": "...", "arguments": {...}},
//     "elicitation": true, "answer": {"action": "accept", "content": {"confirm": true}} }
// The report: { elicitations: [params...], result | error }.
// Exit status: 0 when the call got an answer, 1 when a stage failed, 2 for
// a bad plan.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

let plan;
try {
  plan = JSON.parse(process.argv[2] ?? '');
} catch (e) {
  process.stderr.write(`confirm.mjs: the plan is not JSON: ${e.message}\n`);
  process.exit(2);
}

const report = { elicitations: [], result: null, error: null };

function finish(code) {
  process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(code));
  return new Promise(() => {});
}

const capabilities = plan.elicitation === false ? {} : { elicitation: {} };
const client = new Client({ name: 'mcpgate-e2e-confirm', version: '1.0.0' }, { capabilities });
if (plan.elicitation !== false) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    report.elicitations.push(req.params);
    return plan.answer;
  });
}
const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } });
const timeout = { timeout: plan.timeoutMs ?? 60000 };

let code = 0;
try {
  await client.connect(transport, timeout);
  report.result = await client.callTool({ name: plan.call.name, arguments: plan.call.arguments ?? {} }, undefined, timeout);
} catch (e) {
  report.error = { message: e?.message ?? String(e), code: e?.code };
  code = 1;
}
await client.close().catch(() => {});
await finish(code);
