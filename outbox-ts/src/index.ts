/**
 * hookline's producer library for TypeScript and JavaScript: the DynamoDB
 * item a producer writes to the outbox table, in the same TransactWriteItems
 * call as its own business write, so that an event exists if and only if the
 * business change committed (the transactional outbox pattern).
 *
 * It is the Go module github.com/hookline/hookline/outbox in another
 * language: the same checks in the same order, with the same reasons and
 * messages, and the same item, held to the shared test vectors
 * (outbox/testvectors.json). The put carries attribute_not_exists(#id): an
 * event id is written once, and a producer that retries its transaction
 * cannot create a second event.
 *
 * It has no runtime dependency: the item is plain DynamoDB JSON ({S: ...},
 * {N: ...}), which the AWS SDK for JavaScript v3's TransactWriteItemsCommand
 * takes as it is.
 *
 * @module
 */

import { decodeUTF8, firstInvalidChar, formatU, goQuote, hex4, truncate, utf8Length, wellFormed } from "./text.js";
import { formatRFC3339Nano, fromDate, isZero, parseRFC3339, type Instant } from "./time.js";

/** Attribute names of an outbox item: the producer contract. */
export const ATTR_ID = "id";
/** The tenant that owns the event (S). */
export const ATTR_TENANT_ID = "tenant_id";
/** The event type, e.g. payment.succeeded (S). */
export const ATTR_TYPE = "type";
/** The payload, a JSON document (S). */
export const ATTR_PAYLOAD = "payload";
/** When the business change happened, RFC 3339 in UTC (S). */
export const ATTR_OCCURRED_AT = "occurred_at";
/** Optional: deliver to this endpoint only (S). */
export const ATTR_ENDPOINT_ID = "endpoint_id";
/** Optional ordering hint (N). */
export const ATTR_SEQUENCE = "sequence";
/** The item's TTL, unix seconds (N). */
export const ATTR_EXPIRES_AT = "expires_at";
/** Optional: the producer's W3C trace context (S). */
export const ATTR_TRACE_PARENT = "traceparent";

/**
 * How long after occurredAt an outbox item is kept, in seconds, when the
 * event sets neither expiresAt nor noExpiry: 16 days. hookline delivers from
 * the stream record; the item is read again only by hand, while the enqueue
 * failure queue may still hold its event (docs/operations.md).
 */
export const DEFAULT_RETENTION_SECONDS = 16 * 24 * 60 * 60;

/** The payload's limit in UTF-8 bytes (192 KiB): a delivery message always fits in one SQS message. */
export const MAX_PAYLOAD_BYTES = 192 * 1024;
/** The limit in UTF-8 bytes of the event id, tenant id, endpoint id and type. */
export const MAX_ID_BYTES = 256;
/** How deep a payload may nest objects and arrays (the payload itself is depth 1). */
export const MAX_PAYLOAD_DEPTH = 32;
/** The limit in UTF-8 bytes of an OutboxValidationError's detail. */
export const MAX_DETAIL_BYTES = 512;

/** Why an outbox item is refused: the reasons hookline records for a rejected item. */
export const Reason = {
  MissingField: "missing_field",
  WrongType: "wrong_type",
  InvalidJSON: "invalid_json",
  InvalidUTF8: "invalid_utf8",
  TooLarge: "too_large",
  InvalidTimestamp: "invalid_timestamp",
  /** A character SQS refuses in a message, or in an id or type a control character. */
  InvalidCharacters: "invalid_characters",
  /** One of RESERVED_TYPES, which only hookline writes. */
  ReservedType: "reserved_type",
  /** A payload nesting objects and arrays deeper than MAX_PAYLOAD_DEPTH. */
  TooDeep: "too_deep",
} as const;

/** One of the Reason values. */
export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * The event types hookline itself emits (its operational events, and
 * hookline.test): a producer may not write them.
 */
export const RESERVED_TYPES: readonly string[] = Object.freeze([
  "endpoint.disabled",
  "endpoint.failing",
  "endpoint.recovered",
  "delivery.dead",
  "endpoint.degraded",
  "hookline.test",
]);

/** isReservedType reports whether t is one of RESERVED_TYPES. */
export function isReservedType(t: string): boolean {
  return RESERVED_TYPES.includes(t);
}

/** The message of the error for an event that sets both expiresAt and noExpiry. */
export const EXPIRY_CONFLICT_MESSAGE = "outbox event sets both ExpiresAt and NoExpiry";
/** The message of the error of transactPut without a table name. */
export const NO_TABLE_MESSAGE = "outbox table name is required";

/** An outbox event, as a producer gives it. */
export interface OutboxEvent {
  /** Chosen by the producer and unique across all events. Required. */
  id: string;
  /** Owns the event; it is delivered to that tenant's endpoints. Required. */
  tenantId: string;
  /** Names the event, e.g. "payment.succeeded". Required. */
  type: string;
  /**
   * Delivered unchanged as the body's "data". Required. A string (or a
   * Uint8Array, e.g. a Buffer, of its UTF-8 bytes) is the JSON text as it
   * is; any other value is written with JSON.stringify, with U+FFFE and
   * U+FFFF (which SQS refuses) escaped. undefined, null and "" are missing.
   */
  payload: unknown;
  /**
   * When the business change happened. Required. A string is read as RFC
   * 3339 to the nanosecond (as Go's time.Parse(time.RFC3339Nano) reads it);
   * a Date holds milliseconds. Written in UTC.
   */
  occurredAt: string | Date;
  /** When set (not ""), delivers to that endpoint only. Default: every subscribed endpoint of the tenant. */
  endpointId?: string | undefined;
  /** When set, passed to receivers as an ordering hint: a safe integer, or a bigint in the 64-bit signed range. */
  sequence?: number | bigint | undefined;
  /**
   * The item's expires_at: DynamoDB's TTL deletes the item some time after
   * it. A Date, or unix seconds. Default: occurredAt + DEFAULT_RETENTION_SECONDS.
   */
  expiresAt?: Date | number | undefined;
  /** When true, writes no expires_at: the item is kept until someone deletes it. expiresAt must then be unset. Default false. */
  noExpiry?: boolean | undefined;
  /**
   * The producer's W3C trace context (a traceparent header value): the
   * event's deliveries join that trace. A value that is not a valid
   * traceparent (validTraceParent) is left out of the item, never an error.
   */
  traceParent?: string | undefined;
}

/** An attribute of an outbox item, in DynamoDB's JSON: the SDK's AttributeValue takes it. */
export type AttributeValue = { S: string } | { N: string };

/** An outbox item, in DynamoDB's JSON. */
export type OutboxItem = Record<string, AttributeValue>;

/** The Put of an outbox item: the SDK's Put takes it. */
export interface OutboxPut {
  TableName: string;
  Item: OutboxItem;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
}

/** A TransactWriteItem that writes an outbox item: add it to TransactItems. */
export interface OutboxTransactWriteItem {
  Put: OutboxPut;
}

/**
 * OutboxValidationError says why an outbox event cannot be delivered: the
 * same reason, field (an attribute name) and detail as the Go library's
 * ValidationError, and its message, `outbox item field "<field>": <detail>
 * (<reason>)`.
 */
export class OutboxValidationError extends Error {
  /** One of the Reason values. */
  readonly reason: Reason;
  /** The attribute at fault, e.g. "payload". */
  readonly field: string;
  /** A sentence for humans, at most MAX_DETAIL_BYTES. */
  readonly detail: string;

  constructor(reason: Reason, field: string, detail: string) {
    super(`outbox item field ${goQuote(field)}: ${detail} (${reason})`);
    this.name = "OutboxValidationError";
    this.reason = reason;
    this.field = field;
    this.detail = detail;
  }
}

function invalid(reason: Reason, field: string, detail: string): OutboxValidationError {
  return new OutboxValidationError(reason, field, truncate(detail, MAX_DETAIL_BYTES));
}

function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`;
}

/**
 * validTraceParent reports whether s is a traceparent hookline reads (W3C
 * Trace Context, version 00: 55 characters, lowercase hex, ids not all zero,
 * and a later version read the same way).
 */
export function validTraceParent(s: unknown): boolean {
  if (typeof s !== "string") return false;
  if (
    s.length < 55 ||
    s[2] !== "-" ||
    s[35] !== "-" ||
    s[52] !== "-" ||
    s.startsWith("ff") ||
    (s.startsWith("00") && s.length !== 55) ||
    (s.length > 55 && s[55] !== "-")
  ) {
    return false;
  }
  for (const part of [s.slice(0, 2), s.slice(3, 35), s.slice(36, 52), s.slice(53, 55)]) {
    if (!/^[0-9a-f]+$/.test(part)) return false;
    if (part.length > 2 && /^0+$/.test(part)) return false;
  }
  return true;
}

/**
 * payloadDepth is how deep the JSON document json nests objects and arrays
 * (a scalar is 0, {} and [] are 1), counted outside strings in one pass.
 */
export function payloadDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < json.length; i++) {
    switch (json.charCodeAt(i)) {
      case 0x22: // "
        for (i++; i < json.length && json.charCodeAt(i) !== 0x22; i++) {
          if (json.charCodeAt(i) === 0x5c) i++;
        }
        break;
      case 0x7b: // {
      case 0x5b: // [
        depth++;
        if (depth > deepest) deepest = depth;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth--;
        break;
    }
  }
  return deepest;
}

/** validText reports whether s may be an event id, tenant id, endpoint id or type. */
export function validText(s: string): boolean {
  return checkText("", s) === undefined;
}

function checkText(field: string, v: string): OutboxValidationError | undefined {
  const size = utf8Length(v);
  if (size > MAX_ID_BYTES) {
    return invalid(Reason.TooLarge, field, `is ${size} bytes, over the limit of ${MAX_ID_BYTES}`);
  }
  if (!wellFormed(v)) {
    return invalid(Reason.InvalidUTF8, field, "is not valid UTF-8");
  }
  const bad = firstInvalidChar(v, true);
  if (bad !== undefined) {
    const u = formatU(bad.cp);
    return invalid(
      Reason.InvalidCharacters,
      field,
      `has the character ${u} at byte ${bad.at}: ids and types travel in HTTP headers and SQS messages, which refuse control characters and ${u}`,
    );
  }
  return undefined;
}

/** The payload's JSON text, or its error. */
function payloadText(p: unknown): string | OutboxValidationError {
  if (p === undefined || p === null) {
    return invalid(Reason.MissingField, ATTR_PAYLOAD, "is required");
  }
  let text: string;
  if (typeof p === "string") {
    text = p;
  } else if (p instanceof Uint8Array) {
    if (p.length === 0) return invalid(Reason.MissingField, ATTR_PAYLOAD, "is required");
    if (p.length > MAX_PAYLOAD_BYTES) {
      return invalid(Reason.TooLarge, ATTR_PAYLOAD, `is ${p.length} bytes, over the limit of ${MAX_PAYLOAD_BYTES}`);
    }
    const s = decodeUTF8(p);
    if (s === undefined) return invalid(Reason.InvalidUTF8, ATTR_PAYLOAD, "is not valid UTF-8");
    text = s;
  } else {
    let s: string | undefined;
    try {
      s = JSON.stringify(p);
    } catch (err) {
      return invalid(Reason.WrongType, ATTR_PAYLOAD, `cannot be written as JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (s === undefined) {
      return invalid(Reason.WrongType, ATTR_PAYLOAD, `is ${typeName(p)}, which JSON cannot hold`);
    }
    // JSON.stringify leaves U+FFFE and U+FFFF as they are, and they can only
    // be in its strings: escaped, the document is the same, and SQS takes it.
    text = s.replace(/[\uFFFE\uFFFF]/g, (c) => "\\u" + hex4(c.charCodeAt(0)));
  }
  if (text === "") {
    return invalid(Reason.MissingField, ATTR_PAYLOAD, "is required");
  }
  const size = utf8Length(text);
  if (size > MAX_PAYLOAD_BYTES) {
    return invalid(Reason.TooLarge, ATTR_PAYLOAD, `is ${size} bytes, over the limit of ${MAX_PAYLOAD_BYTES}`);
  }
  if (!wellFormed(text)) {
    return invalid(Reason.InvalidUTF8, ATTR_PAYLOAD, "is not valid UTF-8");
  }
  const bad = firstInvalidChar(text, false);
  if (bad !== undefined) {
    return invalid(
      Reason.InvalidCharacters,
      ATTR_PAYLOAD,
      `has the character ${formatU(bad.cp)} at byte ${bad.at}, which SQS refuses in a message (escape it in JSON as \\u${hex4(bad.cp)})`,
    );
  }
  try {
    JSON.parse(text);
  } catch {
    return invalid(Reason.InvalidJSON, ATTR_PAYLOAD, "is not a valid JSON document");
  }
  const depth = payloadDepth(text);
  if (depth > MAX_PAYLOAD_DEPTH) {
    return invalid(
      Reason.TooDeep,
      ATTR_PAYLOAD,
      `nests objects and arrays ${depth} deep, over the limit of ${MAX_PAYLOAD_DEPTH} (MaxPayloadDepth)`,
    );
  }
  return text;
}

function occurredAtOf(v: unknown): Instant | OutboxValidationError {
  let t: Instant | undefined;
  if (v === undefined || v === null || v === "") {
    return invalid(Reason.MissingField, ATTR_OCCURRED_AT, "is required");
  } else if (typeof v === "string") {
    t = parseRFC3339(v);
    if (t === undefined) {
      return invalid(Reason.InvalidTimestamp, ATTR_OCCURRED_AT, `${goQuote(truncate(v, 64))} is not an RFC 3339 time`);
    }
  } else if (v instanceof Date) {
    t = fromDate(v);
    if (t === undefined) {
      return invalid(Reason.InvalidTimestamp, ATTR_OCCURRED_AT, "is an invalid Date");
    }
  } else {
    return invalid(Reason.WrongType, ATTR_OCCURRED_AT, `is ${typeName(v)}, not an RFC 3339 string or a Date`);
  }
  if (isZero(t)) {
    return invalid(Reason.MissingField, ATTR_OCCURRED_AT, "is required"); // Go's zero time.Time
  }
  return t;
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

function sequenceOf(v: unknown): string | undefined | OutboxValidationError {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "bigint") {
    if (v < int64Min || v > int64Max) {
      return invalid(Reason.TooLarge, ATTR_SEQUENCE, `is ${v}, outside the 64-bit signed range`);
    }
    return v.toString();
  }
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) {
      return invalid(Reason.WrongType, ATTR_SEQUENCE, `is ${v}, not a safe integer (a bigint holds any 64-bit one)`);
    }
    return String(v === 0 ? 0 : v);
  }
  return invalid(Reason.WrongType, ATTR_SEQUENCE, `is ${typeName(v)}, not a number or a bigint`);
}

/** expires_at in unix seconds, undefined when unset (or Go's zero time). */
function expiresAtOf(v: unknown): number | undefined | OutboxValidationError {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Date) {
    const t = fromDate(v);
    if (t === undefined) return invalid(Reason.InvalidTimestamp, ATTR_EXPIRES_AT, "is an invalid Date");
    return isZero(t) ? undefined : t.seconds;
  }
  if (typeof v === "number") {
    if (!Number.isFinite(v)) return invalid(Reason.WrongType, ATTR_EXPIRES_AT, `is ${v}, not unix seconds`);
    return Math.floor(v);
  }
  return invalid(Reason.WrongType, ATTR_EXPIRES_AT, `is ${typeName(v)}, not a Date or unix seconds`);
}

interface Checked {
  payload: string;
  occurredAt: Instant;
  sequence: string | undefined;
  expiresAt: number | undefined;
}

/** check is validate's work: the event's values in their written form, or the first problem. */
function check(e: OutboxEvent): Checked | OutboxValidationError {
  if (e === null || typeof e !== "object") {
    throw new TypeError(`outbox event must be an object, not ${typeName(e)}`);
  }
  for (const [name, value] of [
    [ATTR_ID, e.id],
    [ATTR_TENANT_ID, e.tenantId],
    [ATTR_TYPE, e.type],
  ] as const) {
    if (value === undefined || value === null || value === "") {
      return invalid(Reason.MissingField, name, "is required");
    }
    if (typeof value !== "string") {
      return invalid(Reason.WrongType, name, `is ${typeName(value)}, not a string`);
    }
    const err = checkText(name, value);
    if (err !== undefined) return err;
  }
  if (e.endpointId !== undefined && e.endpointId !== null && e.endpointId !== "") {
    if (typeof e.endpointId !== "string") {
      return invalid(Reason.WrongType, ATTR_ENDPOINT_ID, `is ${typeName(e.endpointId)}, not a string`);
    }
    const err = checkText(ATTR_ENDPOINT_ID, e.endpointId);
    if (err !== undefined) return err;
  }
  const payload = payloadText(e.payload);
  if (payload instanceof OutboxValidationError) return payload;
  const occurredAt = occurredAtOf(e.occurredAt);
  if (occurredAt instanceof OutboxValidationError) return occurredAt;
  const sequence = sequenceOf(e.sequence);
  if (sequence instanceof OutboxValidationError) return sequence;
  const expiresAt = expiresAtOf(e.expiresAt);
  if (expiresAt instanceof OutboxValidationError) return expiresAt;
  if (isReservedType(e.type)) {
    return invalid(Reason.ReservedType, ATTR_TYPE, `${goQuote(e.type)} is reserved for the events hookline itself sends`);
  }
  return { payload, occurredAt, sequence, expiresAt };
}

/**
 * validate throws an OutboxValidationError for the first problem that stops
 * the event from being delivered, and returns otherwise. Fields are checked
 * in the Go library's order: id, tenant_id, type, endpoint_id, payload,
 * occurred_at; a reserved type is checked last, so its error
 * (reserved_type) means every other check passed. It is the check hookline's
 * enqueue applies to every outbox item it reads.
 */
export function validate(event: OutboxEvent): void {
  const c = check(event);
  if (c instanceof OutboxValidationError) throw c;
}

/**
 * outboxItem returns the DynamoDB item of the event, after validating it
 * (it throws what validate throws, and an Error when both expiresAt and
 * noExpiry are set). Its expires_at is expiresAt, else occurredAt +
 * DEFAULT_RETENTION_SECONDS, and absent with noExpiry.
 */
export function outboxItem(event: OutboxEvent): OutboxItem {
  const c = check(event);
  if (c instanceof OutboxValidationError) throw c;
  if (event.noExpiry === true && c.expiresAt !== undefined) {
    throw new Error(EXPIRY_CONFLICT_MESSAGE);
  }
  const item: OutboxItem = {
    [ATTR_ID]: { S: event.id },
    [ATTR_TENANT_ID]: { S: event.tenantId },
    [ATTR_TYPE]: { S: event.type },
    [ATTR_PAYLOAD]: { S: c.payload },
    [ATTR_OCCURRED_AT]: { S: formatRFC3339Nano(c.occurredAt) },
  };
  if (typeof event.endpointId === "string" && event.endpointId !== "") {
    item[ATTR_ENDPOINT_ID] = { S: event.endpointId };
  }
  if (validTraceParent(event.traceParent)) {
    item[ATTR_TRACE_PARENT] = { S: event.traceParent as string };
  }
  if (c.sequence !== undefined) {
    item[ATTR_SEQUENCE] = { N: c.sequence };
  }
  if (event.noExpiry !== true) {
    const expires = c.expiresAt ?? c.occurredAt.seconds + DEFAULT_RETENTION_SECONDS;
    item[ATTR_EXPIRES_AT] = { N: String(expires) };
  }
  return item;
}

/**
 * putIfNew is the Put of an outbox item into table, with the condition every
 * outbox put carries: no event with the item's id is there already
 * (attribute_not_exists(#id)), so that an event id is written once.
 */
export function putIfNew(table: string, item: OutboxItem): OutboxPut {
  return {
    TableName: table,
    Item: item,
    ConditionExpression: "attribute_not_exists(#id)",
    ExpressionAttributeNames: { "#id": ATTR_ID },
  };
}

/**
 * transactPut returns the TransactWriteItem that writes the event to the
 * outbox table, for the producer to add to its own TransactWriteItems call:
 * { Put: ... }. The put fails the transaction if an event with the same id
 * already exists. It throws an Error without a table name, and what
 * outboxItem throws.
 */
export function transactPut(table: string, event: OutboxEvent): OutboxTransactWriteItem {
  if (typeof table !== "string" || table === "") {
    throw new Error(NO_TABLE_MESSAGE);
  }
  return { Put: putIfNew(table, outboxItem(event)) };
}
