// Compiled by npm test (tsc -p test, no output): what transactPut and
// putIfNew return is what the AWS SDK for JavaScript v3 takes, unchanged.
import { TransactWriteItemsCommand, type Put, type TransactWriteItem } from "@aws-sdk/client-dynamodb";
import { outboxItem, putIfNew, transactPut, type OutboxEvent } from "../src/index.js";

const event: OutboxEvent = { id: "evt_1", tenantId: "acme", type: "order.paid", payload: { orderId: "o_1" }, occurredAt: new Date() };
const item: TransactWriteItem = transactPut("outbox", event);
const put: Put = putIfNew("outbox", outboxItem(event));
export const command = new TransactWriteItemsCommand({
  TransactItems: [{ Put: { TableName: "orders", Item: { pk: { S: "order#o_1" } } } }, item, { Put: put }],
});
