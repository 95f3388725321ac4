// A producer: it marks an order paid and writes its event to hookline's
// outbox in ONE TransactWriteItems, so that the event exists if and only if
// the order's change committed.
//
// It reads one JSON object on stdin:
//
//   {"outboxTable": "...", "businessTable": "...", "tenantId": "...",
//    "eventId": "...", "type": "order.paid", "payload": {...}, "orderId": "..."}
//
// and prints {"ok":true} once the transaction committed. The AWS SDK for
// JavaScript v3 takes its region and credentials from the environment
// (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), and its endpoint
// from AWS_ENDPOINT_URL when set (a local cloud).
//
// Run it from a checkout after `npm ci && npm run build` in outbox-ts:
//
//   echo '{...}' | node outbox-ts/examples/produce.mjs
import { DynamoDBClient, TransactWriteItemsCommand } from "@aws-sdk/client-dynamodb";
import { transactPut } from "@hookline/outbox";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

async function main() {
  const input = JSON.parse(await readStdin());
  for (const name of ["outboxTable", "businessTable", "tenantId", "eventId", "type", "orderId"]) {
    if (typeof input[name] !== "string" || input[name] === "") {
      throw new Error(`input: ${name} is required (a string)`);
    }
  }

  // The event: validated here, before anything is written; an invalid one
  // throws an OutboxValidationError naming the field and the reason.
  const event = transactPut(input.outboxTable, {
    id: input.eventId,
    tenantId: input.tenantId,
    type: input.type,
    payload: input.payload, // an object: written with JSON.stringify
    occurredAt: new Date(),
  });

  const endpoint = process.env.AWS_ENDPOINT_URL;
  const db = new DynamoDBClient(endpoint ? { endpoint } : {});
  await db.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: input.businessTable, Item: { pk: { S: `order#${input.orderId}` }, status: { S: "paid" } } } },
        event,
      ],
    }),
  );
  process.stdout.write(JSON.stringify({ ok: true }) + "\n");
}

main().catch((err) => {
  process.stderr.write(`produce: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
