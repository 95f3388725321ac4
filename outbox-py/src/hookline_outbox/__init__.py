"""hookline's producer library for Python: the DynamoDB item of an event,
for the producer's own TransactWriteItems call (the transactional outbox).

    from datetime import datetime, timezone

    import boto3
    from hookline_outbox import Event, transact_put

    boto3.client("dynamodb").transact_write_items(TransactItems=[
        {"Put": {"TableName": "orders", "Item": {"pk": {"S": "order#42"}}}},
        transact_put("outbox", Event(id="evt_42", tenant_id="acme",
                                     type="order.paid", payload={"order": 42},
                                     occurred_at=datetime.now(timezone.utc))),
    ])

Either both writes commit or neither does. The put carries
attribute_not_exists(id): an event id is written once, and a producer that
retries its transaction cannot create a second event. The item is checked
as hookline's Go library checks it (outbox/outbox.go), with the same
reasons and texts, and the same file of test vectors
(outbox/testvectors.json) holds both. Items are plain DynamoDB JSON dicts:
this package depends on nothing.
"""

from ._jsontext import payload_depth as _payload_depth
from ._outbox import (
    ATTR_ENDPOINT_ID,
    ATTR_EXPIRES_AT,
    ATTR_ID,
    ATTR_OCCURRED_AT,
    ATTR_PAYLOAD,
    ATTR_SEQUENCE,
    ATTR_TENANT_ID,
    ATTR_TRACE_PARENT,
    ATTR_TYPE,
    DEFAULT_RETENTION,
    MAX_DETAIL_BYTES,
    MAX_ID_BYTES,
    MAX_PAYLOAD_BYTES,
    MAX_PAYLOAD_DEPTH,
    REASON_INVALID_CHARS,
    REASON_INVALID_JSON,
    REASON_INVALID_TIME,
    REASON_INVALID_UTF8,
    REASON_MISSING_FIELD,
    REASON_RESERVED_TYPE,
    REASON_TOO_DEEP,
    REASON_TOO_LARGE,
    REASON_WRONG_TYPE,
    RESERVED_TYPES,
    Event,
    ExpiryConflictError,
    NoTableError,
    OutboxError,
    OutboxValidationError,
    is_reserved_type,
    outbox_item,
    put_if_new,
    sqs_allowed,
    transact_put,
    valid_text,
    valid_trace_parent,
    validate,
)


def payload_depth(data: "str | bytes") -> int:
    """How deep the JSON document data nests objects and arrays (a scalar
    is 0, {} and [] are 1), counted outside strings as hookline counts it."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return _payload_depth(bytes(data))


__version__ = "0.1.0"

__all__ = [
    "ATTR_ENDPOINT_ID",
    "ATTR_EXPIRES_AT",
    "ATTR_ID",
    "ATTR_OCCURRED_AT",
    "ATTR_PAYLOAD",
    "ATTR_SEQUENCE",
    "ATTR_TENANT_ID",
    "ATTR_TRACE_PARENT",
    "ATTR_TYPE",
    "DEFAULT_RETENTION",
    "MAX_DETAIL_BYTES",
    "MAX_ID_BYTES",
    "MAX_PAYLOAD_BYTES",
    "MAX_PAYLOAD_DEPTH",
    "REASON_INVALID_CHARS",
    "REASON_INVALID_JSON",
    "REASON_INVALID_TIME",
    "REASON_INVALID_UTF8",
    "REASON_MISSING_FIELD",
    "REASON_RESERVED_TYPE",
    "REASON_TOO_DEEP",
    "REASON_TOO_LARGE",
    "REASON_WRONG_TYPE",
    "RESERVED_TYPES",
    "Event",
    "ExpiryConflictError",
    "NoTableError",
    "OutboxError",
    "OutboxValidationError",
    "is_reserved_type",
    "outbox_item",
    "payload_depth",
    "put_if_new",
    "sqs_allowed",
    "transact_put",
    "valid_text",
    "valid_trace_parent",
    "validate",
]
