"""The shared test vectors (outbox/testvectors.json, written by the Go
library): every event becomes the put, or is refused with the error, that
the file says."""

from __future__ import annotations

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))  # run from a checkout, installed or not

from hookline_outbox import Event, OutboxValidationError, transact_put  # noqa: E402

VECTORS = os.path.join(HERE, "..", "..", "outbox", "testvectors.json")


def event_of(i: dict) -> Event:
    """The vector's input as a Python producer gives it."""
    return Event(
        id=i["id"],
        tenant_id=i["tenant_id"],
        type=i["type"],
        payload=i["payload"],
        occurred_at=i["occurred_at"],
        endpoint_id=i.get("endpoint_id"),
        sequence=i.get("sequence"),
        expires_at=i.get("expires_at"),
        no_expiry=i.get("no_expiry", False),
        traceparent=i.get("traceparent"),
    )


def outcome(table: str, e: Event) -> dict:
    """What this library makes of a vector, in the file's form."""
    try:
        return {"put": transact_put("" if table == "-" else table, e)["Put"]}
    except OutboxValidationError as err:
        return {"error": {"reason": err.reason, "field": err.field, "detail": err.detail, "message": str(err)}}
    except ValueError as err:
        return {"error": {"message": str(err)}}


class TestVectors(unittest.TestCase):
    def test_vectors(self) -> None:
        with open(VECTORS, encoding="utf-8") as f:
            vectors = json.load(f)["vectors"]
        self.assertGreaterEqual(len(vectors), 38)
        for n, v in enumerate(vectors):
            with self.subTest("%d %s" % (n, v["name"])):
                want = {k: v[k] for k in ("put", "error") if k in v}
                self.assertEqual(outcome(v["table"], event_of(v["input"])), want)


if __name__ == "__main__":
    unittest.main()
