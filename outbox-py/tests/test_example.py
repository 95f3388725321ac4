"""examples/produce.py against a fake DynamoDB endpoint on this machine:
one TransactWriteItems request, holding the order and its event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, HTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "produce.py")

try:
    import boto3  # noqa: F401
except ImportError:  # the [boto3] extra is not installed
    boto3 = None


class _FakeDynamoDB(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).requests.append((self.headers["X-Amz-Target"], json.loads(body)))
        out = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args) -> None:
        pass


@unittest.skipIf(boto3 is None, "boto3 is not installed (pip install './outbox-py[boto3]')")
class TestExample(unittest.TestCase):
    def test_one_transaction(self) -> None:
        _FakeDynamoDB.requests = []
        server = HTTPServer(("127.0.0.1", 0), _FakeDynamoDB)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        env = dict(
            os.environ,
            AWS_ENDPOINT_URL="http://127.0.0.1:%d" % server.server_port,
            AWS_REGION="eu-west-1",
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            PYTHONPATH=os.path.join(HERE, "..", "src"),
            NO_PROXY="127.0.0.1",
            no_proxy="127.0.0.1",
        )
        env.pop("AWS_PROFILE", None)
        req = {"outboxTable": "outbox", "businessTable": "orders", "tenantId": "acme", "eventId": "evt_py_1",
               "type": "order.paid", "payload": {"order_id": "42", "amount": 4200}, "orderId": "42"}
        out = subprocess.run([sys.executable, EXAMPLE], input=json.dumps(req), capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout), {"ok": True})
        self.assertEqual(len(_FakeDynamoDB.requests), 1)
        target, body = _FakeDynamoDB.requests[0]
        self.assertEqual(target, "DynamoDB_20120810.TransactWriteItems")
        order, event = [t["Put"] for t in body["TransactItems"]]
        self.assertEqual(order, {"TableName": "orders", "Item": {"pk": {"S": "order#42"}, "status": {"S": "paid"}}})
        self.assertEqual(event["TableName"], "outbox")
        self.assertEqual(event["ConditionExpression"], "attribute_not_exists(#id)")
        self.assertEqual(event["Item"]["id"], {"S": "evt_py_1"})
        self.assertEqual(event["Item"]["payload"], {"S": '{"order_id":"42","amount":4200}'})
        self.assertTrue(event["Item"]["occurred_at"]["S"].endswith("Z"))


if __name__ == "__main__":
    unittest.main()
