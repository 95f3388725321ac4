// The library's tests, on its compiled output (npm run build first): every
// vector of the shared file that the Go library writes, and what only a
// JavaScript producer can give (a Date, an object payload, a bigint).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import {
  MAX_PAYLOAD_BYTES,
  OutboxValidationError,
  RESERVED_TYPES,
  Reason,
  outboxItem,
  payloadDepth,
  transactPut,
  validTraceParent,
  validate,
} from "../dist/index.js";

const vectorsFile = new URL("../../outbox/testvectors.json", import.meta.url);
const { vectors } = JSON.parse(readFileSync(vectorsFile, "utf8"));

/**
 * event is a vector's input as a TypeScript producer gives it: the vectors'
 * snake_case names in camelCase (tenant_id: tenantId, occurred_at:
 * occurredAt, endpoint_id: endpointId, expires_at: expiresAt, no_expiry:
 * noExpiry, traceparent: traceParent); an absent or empty value, or an
 * expires_at of 0, is a field not given; payload stays the JSON text.
 */
function event(input) {
  const e = { id: input.id, tenantId: input.tenant_id, type: input.type, payload: input.payload };
  if (input.occurred_at !== "") e.occurredAt = input.occurred_at;
  if (input.endpoint_id) e.endpointId = input.endpoint_id;
  if (input.sequence !== undefined) e.sequence = input.sequence;
  if (input.expires_at) e.expiresAt = input.expires_at;
  if (input.no_expiry) e.noExpiry = true;
  if (input.traceparent) e.traceParent = input.traceparent;
  return e;
}

/** outcome is what transactPut makes of a vector, in the vector's form: { put } or { error }. */
function outcome(v) {
  const table = v.table === "-" ? "" : v.table;
  try {
    return { put: transactPut(table, event(v.input)).Put };
  } catch (err) {
    if (err instanceof OutboxValidationError) {
      return { error: { reason: err.reason, field: err.field, detail: err.detail, message: err.message } };
    }
    assert.equal(err.constructor, Error, "the errors that are not a field's are plain Errors");
    return { error: { message: err.message } };
  }
}

describe("the shared test vectors (outbox/testvectors.json)", () => {
  it("has vectors", () => assert.ok(vectors.length >= 38, `${vectors.length} vectors`));
  for (const [i, v] of vectors.entries()) {
    it(`${i} ${v.name}`, () => {
      const want = v.put ? { put: v.put } : { error: v.error };
      assert.deepStrictEqual(outcome(v), want);
    });
  }
});

const base = {
  id: "evt_1",
  tenantId: "acme",
  type: "payment.succeeded",
  payload: '{"amount":1250,"currency":"EUR"}',
  occurredAt: "2026-12-07T10:00:00Z",
};

/** rejects asserts that fn throws an OutboxValidationError with reason, field and detail. */
function rejects(fn, reason, field, detail) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof OutboxValidationError, `${err}`);
    assert.equal(err.name, "OutboxValidationError");
    assert.deepStrictEqual({ reason: err.reason, field: err.field, detail: err.detail }, { reason, field, detail });
    assert.equal(err.message, `outbox item field "${field}": ${detail} (${reason})`);
    return true;
  });
}

describe("what a TypeScript producer gives", () => {
  it("takes a Date as occurredAt, to the millisecond, in UTC", () => {
    const item = outboxItem({ ...base, occurredAt: new Date("2026-12-07T12:30:00.250+02:00") });
    assert.deepStrictEqual(item.occurred_at, { S: "2026-12-07T10:30:00.25Z" });
    assert.deepStrictEqual(item.expires_at, { N: String(Date.UTC(2026, 11, 23, 10, 30) / 1000) });
  });

  it("writes an object payload with JSON.stringify, U+FFFE and U+FFFF escaped", () => {
    const payload = { amount: 1250, note: "caf\u00e9 \uffff", items: [1, [2]] };
    const item = outboxItem({ ...base, payload });
    assert.deepStrictEqual(item.payload, { S: '{"amount":1250,"note":"café \\uffff","items":[1,[2]]}' });
    assert.deepStrictEqual(JSON.parse(item.payload.S), payload);
  });

  it("takes the payload's UTF-8 bytes (a Buffer) and refuses invalid ones", () => {
    assert.deepStrictEqual(outboxItem({ ...base, payload: Buffer.from('{"a":"\u2603"}') }).payload, { S: '{"a":"\u2603"}' });
    rejects(() => validate({ ...base, payload: Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]) }), Reason.InvalidUTF8, "payload", "is not valid UTF-8");
    rejects(() => validate({ ...base, payload: Buffer.from([0x22, 0xc0, 0xaf, 0x22]) }), Reason.InvalidUTF8, "payload", "is not valid UTF-8");
  });

  it("refuses a payload JSON cannot hold", () => {
    rejects(() => validate({ ...base, payload: undefined }), Reason.MissingField, "payload", "is required");
    rejects(() => validate({ ...base, payload: null }), Reason.MissingField, "payload", "is required");
    rejects(() => validate({ ...base, payload: () => 1 }), Reason.WrongType, "payload", "is a function, which JSON cannot hold");
    rejects(() => validate({ ...base, payload: { n: 1n } }), Reason.WrongType, "payload", "cannot be written as JSON: Do not know how to serialize a BigInt");
    const big = "x".repeat(MAX_PAYLOAD_BYTES);
    rejects(() => validate({ ...base, payload: { big } }), Reason.TooLarge, "payload", `is ${MAX_PAYLOAD_BYTES + 10} bytes, over the limit of ${MAX_PAYLOAD_BYTES}`);
  });

  it("writes a bigint sequence beyond 2^53, and refuses what is not an int64", () => {
    const item = outboxItem({ ...base, sequence: 9223372036854775807n });
    assert.deepStrictEqual(item.sequence, { N: "9223372036854775807" });
    rejects(() => validate({ ...base, sequence: 2n ** 63n }), Reason.TooLarge, "sequence", "is 9223372036854775808, outside the 64-bit signed range");
    rejects(() => validate({ ...base, sequence: 1.5 }), Reason.WrongType, "sequence", "is 1.5, not a safe integer (a bigint holds any 64-bit one)");
    rejects(() => validate({ ...base, sequence: 2 ** 60 }), Reason.WrongType, "sequence", "is 1152921504606847000, not a safe integer (a bigint holds any 64-bit one)");
  });

  it("takes expiresAt as a Date or unix seconds", () => {
    assert.deepStrictEqual(outboxItem({ ...base, expiresAt: new Date(1798000000999) }).expires_at, { N: "1798000000" });
    assert.deepStrictEqual(outboxItem({ ...base, expiresAt: 1798000000 }).expires_at, { N: "1798000000" });
    assert.throws(() => outboxItem({ ...base, expiresAt: new Date(1798000000000), noExpiry: true }), {
      constructor: Error,
      message: "outbox event sets both ExpiresAt and NoExpiry",
    });
  });

  it("reads occurred_at to the nanosecond as Go's time.Parse does", () => {
    const at = (occurredAt) => outboxItem({ ...base, occurredAt }).occurred_at.S;
    assert.equal(at("2026-12-07T10:00:00.1234567891Z"), "2026-12-07T10:00:00.123456789Z");
    assert.equal(at("2026-12-07T10:00:00,5Z"), "2026-12-07T10:00:00.5Z");
    assert.equal(at("2026-12-07T9:00:00-01:00"), "2026-12-07T10:00:00Z");
    assert.equal(at("0001-01-01T00:00:00.000000001Z"), "0001-01-01T00:00:00.000000001Z");
    assert.equal(at("2024-02-29T23:59:59.999999999-00:30"), "2024-03-01T00:29:59.999999999Z");
    rejects(() => validate({ ...base, occurredAt: "0001-01-01T00:00:00Z" }), Reason.MissingField, "occurred_at", "is required");
    for (const s of ["2026-02-29T10:00:00Z", "2026-12-07T24:00:00Z", "2026-12-07t10:00:00Z", "2026-12-07T10:00:00z", "2026-12-07T10:00:60Z", "2026-12-07T10:00:00+0100"]) {
      assert.throws(() => validate({ ...base, occurredAt: s }), { reason: Reason.InvalidTimestamp }, s);
    }
  });

  it("quotes and truncates an invalid occurred_at as Go's %q does", () => {
    rejects(() => validate({ ...base, occurredAt: 'then\n"\u00e9\u0085' }), Reason.InvalidTimestamp, "occurred_at", '"then\\n\\"\u00e9\\u0085" is not an RFC 3339 time');
    rejects(() => validate({ ...base, occurredAt: "\u00e9".repeat(40) }), Reason.InvalidTimestamp, "occurred_at", `"${"\u00e9".repeat(30)}\u2026" is not an RFC 3339 time`);
    rejects(() => validate({ ...base, occurredAt: new Date(NaN) }), Reason.InvalidTimestamp, "occurred_at", "is an invalid Date");
  });

  it("refuses a lone surrogate (no UTF-8 form) and a value that is not a string", () => {
    rejects(() => validate({ ...base, id: "evt\ud800" }), Reason.InvalidUTF8, "id", "is not valid UTF-8");
    rejects(() => validate({ ...base, payload: '"\udfff"' }), Reason.InvalidUTF8, "payload", "is not valid UTF-8");
    rejects(() => validate({ ...base, tenantId: 42 }), Reason.WrongType, "tenant_id", "is a number, not a string");
    rejects(() => validate({ ...base, occurredAt: 1798000000 }), Reason.WrongType, "occurred_at", "is a number, not an RFC 3339 string or a Date");
  });

  it("counts bytes in UTF-8 for offsets and limits", () => {
    rejects(() => validate({ ...base, type: "caf\u00e9\u{1F600}\u0001" }), Reason.InvalidCharacters, "type",
      "has the character U+0001 at byte 9: ids and types travel in HTTP headers and SQS messages, which refuse control characters and U+0001");
    rejects(() => validate({ ...base, id: "\u{1F600}".repeat(65) }), Reason.TooLarge, "id", "is 260 bytes, over the limit of 256");
  });

  it("exports the reserved types, the depth and the traceparent rules", () => {
    assert.ok(RESERVED_TYPES.includes("hookline.test") && Object.isFrozen(RESERVED_TYPES));
    assert.equal(payloadDepth('{"a":"[[{"}'), 1);
    assert.equal(payloadDepth('"x"'), 0);
    assert.equal(validTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), true);
    assert.equal(validTraceParent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), false);
    assert.equal(validTraceParent(undefined), false);
  });
});
