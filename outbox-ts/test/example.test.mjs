// examples/produce.mjs against a fake DynamoDB endpoint (an HTTP server on
// 127.0.0.1 that records the request and answers {}): one
// TransactWriteItems with the business put and the outbox put, sent where
// AWS_ENDPOINT_URL says.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { it } from "node:test";

const example = fileURLToPath(new URL("../examples/produce.mjs", import.meta.url));

function run(env, stdin) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [example], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

it("writes the order and its event in one TransactWriteItems", async (t) => {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests.push({ target: req.headers["x-amz-target"], body: JSON.parse(body) });
      res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      res.end("{}");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());

  const input = {
    outboxTable: "outbox",
    businessTable: "orders",
    tenantId: "acme",
    eventId: "evt_1",
    type: "order.paid",
    payload: { order_id: "1000", by: "typescript" },
    orderId: "1000",
  };
  const env = {
    PATH: process.env.PATH,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "test",
    AWS_SECRET_ACCESS_KEY: "test",
    AWS_ENDPOINT_URL: `http://127.0.0.1:${server.address().port}`,
  };
  const before = Math.floor(Date.now() / 1000);
  const { code, stdout, stderr } = await run(env, JSON.stringify(input));
  assert.equal(code, 0, stderr);
  assert.deepStrictEqual(JSON.parse(stdout), { ok: true });

  assert.equal(requests.length, 1);
  assert.equal(requests[0].target, "DynamoDB_20120810.TransactWriteItems");
  const [business, event] = requests[0].body.TransactItems;
  assert.deepStrictEqual(business, { Put: { TableName: "orders", Item: { pk: { S: "order#1000" }, status: { S: "paid" } } } });
  const { Item: item, ...put } = event.Put;
  assert.deepStrictEqual(put, { TableName: "outbox", ConditionExpression: "attribute_not_exists(#id)", ExpressionAttributeNames: { "#id": "id" } });
  assert.deepStrictEqual(
    { id: item.id, tenant_id: item.tenant_id, type: item.type, payload: item.payload },
    { id: { S: "evt_1" }, tenant_id: { S: "acme" }, type: { S: "order.paid" }, payload: { S: '{"order_id":"1000","by":"typescript"}' } },
  );
  const occurred = Date.parse(item.occurred_at.S) / 1000;
  assert.ok(occurred >= before && occurred <= Date.now() / 1000, item.occurred_at.S);
  assert.equal(Number(item.expires_at.N), Math.floor(occurred) + 16 * 24 * 3600);
});

it("refuses an invalid event before writing anything", async () => {
  const input = { outboxTable: "outbox", businessTable: "orders", tenantId: "acme", eventId: "evt_1", type: "delivery.dead", payload: {}, orderId: "1" };
  const env = { PATH: process.env.PATH, AWS_REGION: "us-east-1", AWS_ENDPOINT_URL: "http://127.0.0.1:9" };
  const { code, stdout, stderr } = await run(env, JSON.stringify(input));
  assert.equal(code, 1);
  assert.equal(stdout, "");
  assert.match(stderr, /outbox item field "type": "delivery.dead" is reserved for the events hookline itself sends \(reserved_type\)/);
});
