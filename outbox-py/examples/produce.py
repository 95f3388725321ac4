"""A producer: an order marked paid and its event, in one transaction.

Reads one JSON object on stdin:

    {"outboxTable": "...", "businessTable": "...", "tenantId": "acme",
     "eventId": "evt_1", "type": "order.paid", "payload": {...}, "orderId": "42"}

and writes, in ONE transact_write_items call, the business item
{"pk": "order#<orderId>", "status": "paid"} into businessTable and the event
(occurred now) into outboxTable: both or neither. Prints {"ok": true}.

The DynamoDB endpoint is AWS_ENDPOINT_URL when set (a local cloud), the
region AWS_REGION or AWS_DEFAULT_REGION. Needs boto3:
pip install './outbox-py[boto3]'.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone

import boto3

from hookline_outbox import Event, OutboxError, transact_put


def main() -> int:
    req = json.load(sys.stdin)
    try:
        event = transact_put(
            req["outboxTable"],
            Event(
                id=req["eventId"],
                tenant_id=req["tenantId"],
                type=req["type"],
                payload=req["payload"],
                occurred_at=datetime.now(timezone.utc),
            ),
        )
    except OutboxError as err:  # the event is invalid: nothing is written
        print(json.dumps({"ok": False, "error": str(err)}))
        return 1
    db = boto3.client(
        "dynamodb",
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL"),
        region_name=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION"),
    )
    db.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": req["businessTable"],
                    "Item": {"pk": {"S": "order#" + req["orderId"]}, "status": {"S": "paid"}},
                }
            },
            event,
        ]
    )
    print(json.dumps({"ok": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
