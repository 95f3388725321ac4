"""The outbox item of an event: hookline's Go module outbox, in Python.

Every rule, limit, error reason and error text is the Go library's
(outbox/outbox.go); outbox/testvectors.json holds the three libraries to it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional, Union

from ._gotime import ZERO, GoTime, format_rfc3339nano, parse_rfc3339
from ._jsontext import payload_depth, valid_json

# Attribute names of an outbox item: the producer contract.
ATTR_ID = "id"  # S, partition key, unique event id
ATTR_TENANT_ID = "tenant_id"  # S
ATTR_TYPE = "type"  # S, e.g. payment.succeeded
ATTR_PAYLOAD = "payload"  # S, a JSON document
ATTR_OCCURRED_AT = "occurred_at"  # S, RFC 3339
ATTR_ENDPOINT_ID = "endpoint_id"  # S, optional: deliver to this endpoint only
ATTR_SEQUENCE = "sequence"  # N, optional ordering hint
ATTR_EXPIRES_AT = "expires_at"  # N, optional TTL (unix seconds)
ATTR_TRACE_PARENT = "traceparent"  # S, optional W3C trace context

#: How long after occurred_at an item is kept when the event sets neither
#: expires_at nor no_expiry: 16 days (Go's DefaultRetention).
DEFAULT_RETENTION = timedelta(days=16)
_DEFAULT_RETENTION_SECONDS = 16 * 24 * 3600

#: The payload's limit in UTF-8 bytes (192 KiB): a delivery message, payload
#: plus envelope, always fits in one SQS message of 256 KiB.
MAX_PAYLOAD_BYTES = 192 << 10
#: The limit of the event id, tenant id, endpoint id and type, in UTF-8 bytes.
MAX_ID_BYTES = 256
#: How deep a payload may nest objects and arrays (the payload itself is 1).
MAX_PAYLOAD_DEPTH = 32
#: The limit of an error's detail, in UTF-8 bytes.
MAX_DETAIL_BYTES = 512

# Rejection reasons (OutboxValidationError.reason).
REASON_MISSING_FIELD = "missing_field"
REASON_WRONG_TYPE = "wrong_type"
REASON_INVALID_JSON = "invalid_json"
REASON_INVALID_UTF8 = "invalid_utf8"
REASON_TOO_LARGE = "too_large"
REASON_INVALID_TIME = "invalid_timestamp"
#: A character SQS refuses in a message or, in an id or type, a control
#: character, which HTTP refuses in the headers that carry it.
REASON_INVALID_CHARS = "invalid_characters"
#: The type is one of RESERVED_TYPES, which only hookline writes.
REASON_RESERVED_TYPE = "reserved_type"
#: The payload nests objects and arrays deeper than MAX_PAYLOAD_DEPTH.
REASON_TOO_DEEP = "too_deep"

#: The event types hookline itself emits; a producer may not write them.
RESERVED_TYPES = (
    "endpoint.disabled",
    "endpoint.failing",
    "endpoint.recovered",
    "delivery.dead",
    "endpoint.degraded",
    "hookline.test",
)

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class OutboxError(ValueError):
    """Any refusal of this library: an OutboxValidationError,
    ExpiryConflictError or NoTableError."""


class OutboxValidationError(OutboxError):
    """Why an event cannot be delivered: reason (a REASON_ constant), field
    (the attribute at fault) and detail (a sentence), as the Go library's
    ValidationError and hookline's rejection record say it."""

    def __init__(self, reason: str, field: str, detail: str) -> None:
        self.reason = reason
        self.field = field
        self.detail = detail
        super().__init__("outbox item field %s: %s (%s)" % (_go_quote(field), detail, reason))


class ExpiryConflictError(OutboxError):
    """The event sets both expires_at and no_expiry."""

    def __init__(self) -> None:
        super().__init__("outbox event sets both ExpiresAt and NoExpiry")


class NoTableError(OutboxError):
    """transact_put was given no table name."""

    def __init__(self) -> None:
        super().__init__("outbox table name is required")


@dataclass(frozen=True)
class Event:
    """One outbox event, as a producer gives it.

    id: chosen by the producer, unique across all events. Required.
    tenant_id: owns the event; delivered to that tenant's endpoints. Required.
    type: names the event, e.g. "payment.succeeded". Required.
    payload: delivered unchanged as the body's "data". Required. A str (or
        bytes, UTF-8) is taken as the JSON text itself; anything else is
        serialized with json.dumps(separators=(",", ":"), ensure_ascii=False).
        None is "not given"; for a JSON null pass "null".
    occurred_at: when the business change happened. Required. An RFC 3339
        string (nanoseconds kept) or an aware datetime; a naive datetime is
        refused (invalid_timestamp), since it names no instant.
    endpoint_id: when set, delivers to that endpoint only. Default None:
        every subscribed endpoint of the tenant.
    sequence: when set, passed to receivers as an ordering hint; a 64-bit
        integer. Default None.
    expires_at: the item's TTL, an aware datetime or unix seconds (int).
        Default None: occurred_at + DEFAULT_RETENTION (16 days).
    no_expiry: True writes no expires_at (the item is kept until someone
        deletes it); expires_at must then be None. Default False.
    traceparent: the producer's W3C trace context ("00-<trace id>-<span
        id>-<flags>"); written only when valid (valid_trace_parent), never
        an error. Default None.
    """

    id: str
    tenant_id: str
    type: str
    payload: Any
    occurred_at: Union[str, datetime, None]
    endpoint_id: Optional[str] = None
    sequence: Optional[int] = None
    expires_at: Union[datetime, int, None] = None
    no_expiry: bool = False
    traceparent: Optional[str] = None


def sqs_allowed(cp: int) -> bool:
    """Whether SQS accepts code point cp in a message body: #x9, #xA, #xD,
    #x20 to #xD7FF, #xE000 to #xFFFD and #x10000 to #x10FFFF."""
    return (
        cp in (0x9, 0xA, 0xD)
        or 0x20 <= cp <= 0xD7FF
        or 0xE000 <= cp <= 0xFFFD
        or 0x10000 <= cp <= 0x10FFFF
    )


def is_reserved_type(t: str) -> bool:
    """Whether t is one of RESERVED_TYPES."""
    return t in RESERVED_TYPES


def valid_trace_parent(s: Optional[str]) -> bool:
    """Whether s is a traceparent hookline reads (W3C Trace Context, version
    00: 55 characters, lowercase hex, ids not all zero, and a later version
    read the same way)."""
    if not isinstance(s, str):
        return False
    b = s.encode("utf-8", "surrogatepass")
    if (
        len(b) < 55
        or b[2:3] != b"-"
        or b[35:36] != b"-"
        or b[52:53] != b"-"
        or b[:2] == b"ff"
        or (b[:2] == b"00" and len(b) != 55)
        or (len(b) > 55 and b[55:56] != b"-")
    ):
        return False
    for part in (b[0:2], b[3:35], b[36:52], b[53:55]):
        if any(not (0x30 <= c <= 0x39 or 0x61 <= c <= 0x66) for c in part):
            return False
        if len(part) > 2 and part.count(b"0") == len(part):
            return False
    return True


def valid_text(s: str) -> bool:
    """Whether s may be an event id, tenant id, endpoint id or type: at most
    MAX_ID_BYTES, valid UTF-8, free of control characters and of characters
    SQS refuses."""
    try:
        _check_text("", s)
    except OutboxValidationError:
        return False
    return True


def validate(event: Event) -> None:
    """Raises OutboxValidationError for the first problem that stops event
    from being delivered, in the Go library's order: id, tenant_id, type,
    endpoint_id, payload, occurred_at (then this library's own checks of
    expires_at and sequence), and last the reserved type, so that
    reason_type means every other check passed."""
    _validated(event)


def outbox_item(event: Event) -> Dict[str, Dict[str, str]]:
    """The DynamoDB item of event (DynamoDB JSON: {"S": ...}, {"N": ...}),
    after validating it. Its expires_at is event.expires_at, else
    occurred_at + DEFAULT_RETENTION, and absent with no_expiry. Raises
    OutboxValidationError or ExpiryConflictError."""
    payload, occurred, expires = _validated(event)
    if event.no_expiry and expires is not None:
        raise ExpiryConflictError()
    item = {
        ATTR_ID: {"S": event.id},
        ATTR_TENANT_ID: {"S": event.tenant_id},
        ATTR_TYPE: {"S": event.type},
        ATTR_PAYLOAD: {"S": payload},
        ATTR_OCCURRED_AT: {"S": format_rfc3339nano(occurred)},
    }
    if event.endpoint_id:
        item[ATTR_ENDPOINT_ID] = {"S": event.endpoint_id}
    if valid_trace_parent(event.traceparent):
        item[ATTR_TRACE_PARENT] = {"S": event.traceparent}  # type: ignore[dict-item]
    if event.sequence is not None:
        item[ATTR_SEQUENCE] = {"N": str(event.sequence)}
    if not event.no_expiry:
        if expires is None:
            expires = occurred[0] + _DEFAULT_RETENTION_SECONDS
        item[ATTR_EXPIRES_AT] = {"N": str(expires)}
    return item


def put_if_new(table: str, item: Dict[str, Dict[str, str]]) -> Dict[str, Any]:
    """The Put of an outbox item into table, with the condition every outbox
    put carries: no event with the item's id is there (attribute_not_exists),
    so that an event id is written once."""
    return {
        "TableName": table,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#id)",
        "ExpressionAttributeNames": {"#id": ATTR_ID},
    }


def transact_put(table: str, event: Event) -> Dict[str, Any]:
    """The TransactItems entry ({"Put": {...}}) that writes event to the
    outbox table, for the producer's own transact_write_items call. The put
    fails the transaction if an event with the same id exists. Raises
    NoTableError, OutboxValidationError or ExpiryConflictError."""
    if not table:
        raise NoTableError()
    return {"Put": put_if_new(table, outbox_item(event))}


# --- validation ---------------------------------------------------------


def _invalid(reason: str, field: str, detail: str) -> OutboxValidationError:
    return OutboxValidationError(reason, field, _truncate(detail, MAX_DETAIL_BYTES))


def _truncate(s: str, n: int) -> str:
    # Go's Truncate: at most n UTF-8 bytes at a character boundary, with "…"
    # at the end (within the n bytes) when it was cut.
    b = s.encode("utf-8", "surrogatepass")
    if len(b) <= n:
        return s
    more = "…".encode("utf-8")
    cut = max(n - len(more), 0)
    while cut > 0 and (b[cut] & 0xC0) == 0x80:
        cut -= 1
    return (b[:cut] + more).decode("utf-8", "surrogatepass")


def _utf8(field: str, v: str) -> bytes:
    if not isinstance(v, str):
        raise TypeError("outbox event field %s must be a str, not %s" % (field, type(v).__name__))
    # A lone surrogate (which no valid UTF-8 holds) is kept, to be refused
    # as invalid UTF-8, as Go refuses the bytes it would be.
    return v.encode("utf-8", "surrogatepass")


def _first_invalid_char(text: str, b: bytes, header: bool) -> Optional[tuple]:
    # The first character SQS refuses, or with header also a control
    # character (C0 or DEL), and its UTF-8 byte offset. text is valid.
    if b.isascii():
        for at, c in enumerate(b):
            if (header and (c < 0x20 or c == 0x7F)) or not sqs_allowed(c):
                return c, at
        return None
    at = 0
    for ch in text:
        cp = ord(ch)
        if (header and (cp < 0x20 or cp == 0x7F)) or not sqs_allowed(cp):
            return cp, at
        at += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    return None


def _check_text(field: str, v: str) -> None:
    b = _utf8(field, v)
    if len(b) > MAX_ID_BYTES:
        raise _invalid(REASON_TOO_LARGE, field, "is %d bytes, over the limit of %d" % (len(b), MAX_ID_BYTES))
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid(REASON_INVALID_UTF8, field, "is not valid UTF-8") from None
    bad = _first_invalid_char(v, b, True)
    if bad is not None:
        r, at = bad
        raise _invalid(
            REASON_INVALID_CHARS,
            field,
            "has the character %s at byte %d: ids and types travel in HTTP headers and SQS messages, "
            "which refuse control characters and %s" % (_go_u(r), at, _go_u(r)),
        )


def _payload_bytes(payload: Any) -> Optional[bytes]:
    if payload is None:
        return None
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    if not isinstance(payload, str):
        payload = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return payload.encode("utf-8", "surrogatepass")


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_NAIVE = "is a naive datetime (no tzinfo), which names no instant: give an aware one, e.g. datetime.now(timezone.utc)"


def _from_datetime(dt: datetime) -> GoTime:
    us = (dt - _EPOCH) // timedelta(microseconds=1)
    sec, us = divmod(us, 1_000_000)
    return sec, us * 1000


def _occurred_at(v: Any) -> GoTime:
    if v is None or (isinstance(v, str) and v == ""):
        raise _invalid(REASON_MISSING_FIELD, ATTR_OCCURRED_AT, "is required")
    if isinstance(v, datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise _invalid(REASON_INVALID_TIME, ATTR_OCCURRED_AT, _NAIVE)
        t = _from_datetime(v)
    elif isinstance(v, str):
        parsed = parse_rfc3339(v)
        if parsed is None:
            raise _invalid(
                REASON_INVALID_TIME, ATTR_OCCURRED_AT, "%s is not an RFC 3339 time" % _go_quote(_truncate(v, 64))
            )
        t = parsed
    else:
        raise TypeError("outbox event field occurred_at must be a str or a datetime, not %s" % type(v).__name__)
    if t == ZERO:  # Go's zero time.Time: not given
        raise _invalid(REASON_MISSING_FIELD, ATTR_OCCURRED_AT, "is required")
    return t


def _expires_at(v: Any) -> Optional[int]:
    if v is None:
        return None
    if isinstance(v, datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise _invalid(REASON_INVALID_TIME, ATTR_EXPIRES_AT, _NAIVE)
        t = _from_datetime(v)
        return None if t == ZERO else t[0]
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise TypeError("outbox event field expires_at must be a datetime or unix seconds (int), not %s" % type(v).__name__)


def _validated(e: Event) -> tuple:
    # Validate, returning the payload text, occurred_at and expires_at
    # (unix seconds or None) as the item needs them.
    for name, value in ((ATTR_ID, e.id), (ATTR_TENANT_ID, e.tenant_id), (ATTR_TYPE, e.type)):
        if value is None or value == "":
            raise _invalid(REASON_MISSING_FIELD, name, "is required")
        _check_text(name, value)
    if e.endpoint_id is not None and e.endpoint_id != "":
        _check_text(ATTR_ENDPOINT_ID, e.endpoint_id)

    p = _payload_bytes(e.payload)
    if not p:
        raise _invalid(REASON_MISSING_FIELD, ATTR_PAYLOAD, "is required")
    if len(p) > MAX_PAYLOAD_BYTES:
        raise _invalid(REASON_TOO_LARGE, ATTR_PAYLOAD, "is %d bytes, over the limit of %d" % (len(p), MAX_PAYLOAD_BYTES))
    try:
        text = p.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid(REASON_INVALID_UTF8, ATTR_PAYLOAD, "is not valid UTF-8") from None
    bad = _first_invalid_char(text, p, False)
    if bad is not None:
        r, at = bad
        raise _invalid(
            REASON_INVALID_CHARS,
            ATTR_PAYLOAD,
            "has the character %s at byte %d, which SQS refuses in a message (escape it in JSON as \\u%04x)"
            % (_go_u(r), at, r),
        )
    if not valid_json(p):
        raise _invalid(REASON_INVALID_JSON, ATTR_PAYLOAD, "is not a valid JSON document")
    d = payload_depth(p)
    if d > MAX_PAYLOAD_DEPTH:
        raise _invalid(
            REASON_TOO_DEEP,
            ATTR_PAYLOAD,
            "nests objects and arrays %d deep, over the limit of %d (MaxPayloadDepth)" % (d, MAX_PAYLOAD_DEPTH),
        )

    occurred = _occurred_at(e.occurred_at)
    expires = _expires_at(e.expires_at)
    if e.sequence is not None:
        if not isinstance(e.sequence, int) or isinstance(e.sequence, bool):
            raise TypeError("outbox event field sequence must be an int, not %s" % type(e.sequence).__name__)
        if not _INT64_MIN <= e.sequence <= _INT64_MAX:
            raise _invalid(REASON_WRONG_TYPE, ATTR_SEQUENCE, "must be a 64-bit integer")
    if is_reserved_type(e.type):
        raise _invalid(
            REASON_RESERVED_TYPE, ATTR_TYPE, "%s is reserved for the events hookline itself sends" % _go_quote(e.type)
        )
    return text, occurred, expires


# --- Go's formatting ----------------------------------------------------


def _go_u(cp: int) -> str:
    # fmt's %U: "U+" and at least four upper-case hex digits.
    return "U+%04X" % cp


_QUOTE_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}


def _go_quote(s: str) -> str:
    # strconv.Quote (fmt's %q): printable characters as they are; \a \b \f
    # \n \r \t \v, \" and \\; other ASCII controls as \xNN; other
    # non-printable characters as \uNNNN or \UNNNNNNNN; the bytes of invalid
    # UTF-8 (here: a lone surrogate) as \xNN each.
    out = ['"']
    for ch in s:
        cp = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif cp < 0x80:
            if 0x20 <= cp < 0x7F:
                out.append(ch)
            elif cp in _QUOTE_ESCAPES:
                out.append(_QUOTE_ESCAPES[cp])
            else:
                out.append("\\x%02x" % cp)
        elif 0xD800 <= cp <= 0xDFFF:
            out.extend("\\x%02x" % c for c in ch.encode("utf-8", "surrogatepass"))
        elif ch.isprintable():
            out.append(ch)
        elif cp < 0x10000:
            out.append("\\u%04x" % cp)
        else:
            out.append("\\U%08x" % cp)
    out.append('"')
    return "".join(out)
