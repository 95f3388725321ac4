"""What the shared vectors cannot say: the Python forms of an event (a
datetime, a dict payload, bytes), the errors' classes, and the put against
boto3's own model of TransactWriteItems."""

from __future__ import annotations

import os
import sys
import unittest
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import hookline_outbox as ob  # noqa: E402
from hookline_outbox import Event, outbox_item, transact_put, validate  # noqa: E402


def event(**kw) -> Event:
    base = dict(id="evt_1", tenant_id="acme", type="payment.succeeded", payload='{"amount":1250}', occurred_at="2026-12-07T10:00:00Z")
    base.update(kw)
    return Event(**base)


class TestPythonForms(unittest.TestCase):
    def refused(self, e: Event, reason: str, field: str) -> ob.OutboxValidationError:
        with self.assertRaises(ob.OutboxValidationError) as cm:
            transact_put("outbox", e)
        self.assertEqual((cm.exception.reason, cm.exception.field), (reason, field), str(cm.exception))
        return cm.exception

    def test_aware_datetime_is_written_in_utc(self) -> None:
        at = datetime(2026, 12, 7, 12, 30, 0, 500000, tzinfo=timezone(timedelta(hours=2, minutes=30)))
        item = outbox_item(event(occurred_at=at))
        self.assertEqual(item["occurred_at"], {"S": "2026-12-07T10:00:00.5Z"})
        self.assertEqual(item["expires_at"], {"N": str(int(at.timestamp()) + 16 * 86400)})

    def test_naive_datetime_is_refused(self) -> None:
        err = self.refused(event(occurred_at=datetime(2026, 12, 7, 10, 0)), ob.REASON_INVALID_TIME, "occurred_at")
        self.assertIn("naive datetime", err.detail)
        self.refused(event(expires_at=datetime(2027, 1, 1)), ob.REASON_INVALID_TIME, "expires_at")

    def test_go_zero_time_is_not_given(self) -> None:
        self.refused(event(occurred_at="0001-01-01T00:00:00Z"), ob.REASON_MISSING_FIELD, "occurred_at")
        self.refused(event(occurred_at=datetime(1, 1, 1, tzinfo=timezone.utc)), ob.REASON_MISSING_FIELD, "occurred_at")

    def test_dict_payload_is_compact_json(self) -> None:
        item = outbox_item(event(payload={"note": "caf\u00e9", "n": [1, 2]}))
        self.assertEqual(item["payload"], {"S": '{"note":"caf\u00e9","n":[1,2]}'})
        self.assertEqual(outbox_item(event(payload=[]))["payload"], {"S": "[]"})
        self.assertEqual(outbox_item(event(payload=0))["payload"], {"S": "0"})
        self.assertEqual(outbox_item(event(payload="null"))["payload"], {"S": "null"})
        self.assertEqual(outbox_item(event(payload=b'{"a":1}'))["payload"], {"S": '{"a":1}'})
        self.refused(event(payload=None), ob.REASON_MISSING_FIELD, "payload")
        self.refused(event(payload={"x": float("nan")}), ob.REASON_INVALID_JSON, "payload")
        with self.assertRaises(TypeError):
            outbox_item(event(payload={"x": object()}))

    def test_json_as_go_reads_it(self) -> None:
        for bad in ("NaN", "-Infinity", '{"a":Infinity}', "01", "[1,]", "'x'", '"\\x"', "\ufeff{}"):
            with self.subTest(bad):
                self.refused(event(payload=bad), ob.REASON_INVALID_JSON, "payload")
        for good in ('{"a":1,"a":2}', '"\\ud800"', " [1e5, -0.5E-3] \n", "9" * 5000):
            with self.subTest(good[:20]):
                outbox_item(event(payload=good))
        # deeper than Python's recursion limit: too deep, not invalid
        err = self.refused(event(payload="[" * 5000 + "]" * 5000), ob.REASON_TOO_DEEP, "payload")
        self.assertIn("5000 deep", err.detail)
        self.assertEqual(ob.payload_depth('{"a":"[[[","b":[{}]}'), 3)

    def test_expiry(self) -> None:
        at = datetime(2027, 1, 1, tzinfo=timezone.utc)
        self.assertEqual(outbox_item(event(expires_at=at))["expires_at"], {"N": str(int(at.timestamp()))})
        self.assertEqual(outbox_item(event(expires_at=1798000000))["expires_at"], {"N": "1798000000"})
        self.assertNotIn("expires_at", outbox_item(event(no_expiry=True)))
        with self.assertRaises(ob.ExpiryConflictError) as cm:
            outbox_item(event(expires_at=at, no_expiry=True))
        self.assertEqual(str(cm.exception), "outbox event sets both ExpiresAt and NoExpiry")

    def test_sequence_is_a_64_bit_integer(self) -> None:
        self.assertEqual(outbox_item(event(sequence=(1 << 63) - 1))["sequence"], {"N": "9223372036854775807"})
        self.refused(event(sequence=1 << 63), ob.REASON_WRONG_TYPE, "sequence")
        with self.assertRaises(TypeError):
            outbox_item(event(sequence=True))

    def test_text_fields(self) -> None:
        self.refused(event(id="evt_\ud800"), ob.REASON_INVALID_UTF8, "id")
        err = self.refused(event(tenant_id="\u00e9\u00e9\x00"), ob.REASON_INVALID_CHARS, "tenant_id")
        self.assertIn("U+0000 at byte 4", err.detail)
        self.assertEqual(outbox_item(event(endpoint_id="")).get("endpoint_id"), None)
        with self.assertRaises(TypeError):
            outbox_item(event(id=42))
        self.assertTrue(ob.valid_text("acme"))
        self.assertFalse(ob.valid_text("a\nb"))

    def test_errors(self) -> None:
        err = self.refused(event(type="hookline.test"), ob.REASON_RESERVED_TYPE, "type")
        self.assertEqual(str(err), 'outbox item field "type": "hookline.test" is reserved for the events hookline itself sends (reserved_type)')
        with self.assertRaises(ob.OutboxValidationError):
            validate(event(type="delivery.dead"))
        with self.assertRaises(ob.NoTableError) as cm:
            transact_put("", event())
        self.assertEqual(str(cm.exception), "outbox table name is required")
        for cls in (ob.OutboxValidationError, ob.ExpiryConflictError, ob.NoTableError):
            self.assertTrue(issubclass(cls, ob.OutboxError) and issubclass(cls, ValueError))
        # the quoted value is cut to 64 bytes
        err = self.refused(event(occurred_at="x" * 100), ob.REASON_INVALID_TIME, "occurred_at")
        self.assertEqual(err.detail, '"' + "x" * 61 + '\u2026" is not an RFC 3339 time')

    def test_traceparent(self) -> None:
        tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        self.assertEqual(outbox_item(event(traceparent=tp))["traceparent"], {"S": tp})
        self.assertNotIn("traceparent", outbox_item(event(traceparent=tp + "-x")))
        self.assertFalse(ob.valid_trace_parent("ff" + tp[2:]))
        self.assertFalse(ob.valid_trace_parent(None))


try:
    import botocore.session
    import botocore.validate
except ImportError:  # the [boto3] extra is not installed
    botocore = None


@unittest.skipIf(botocore is None, "botocore is not installed (pip install './outbox-py[boto3]')")
class TestBoto3Model(unittest.TestCase):
    def test_put_is_valid_transact_write_items_input(self) -> None:
        model = botocore.session.get_session().get_service_model("dynamodb")
        shape = model.operation_model("TransactWriteItems").input_shape
        full = event(endpoint_id="ep_1", sequence=42, traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", payload={"a": 1})
        params = {
            "TransactItems": [
                {"Put": {"TableName": "orders", "Item": {"pk": {"S": "order#1"}}}},
                transact_put("outbox", full),
            ]
        }
        report = botocore.validate.ParamValidator().validate(params, shape)
        self.assertFalse(report.has_errors(), report.generate_report())


if __name__ == "__main__":
    unittest.main()
