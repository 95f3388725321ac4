// Text as Go sees it: UTF-8 byte lengths and offsets, the characters SQS
// refuses, Truncate and strconv.Quote, over JavaScript's UTF-16 strings. A
// lone surrogate (a string JavaScript allows and UTF-8 cannot encode) counts
// as the three bytes WTF-8 gives it; the validation reports it as invalid
// UTF-8 before any offset is computed.

/** The byte length of one code point (a lone surrogate: 3). */
function utf8Size(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** The code point at index i of s, and how many UTF-16 code units it takes. */
function codePointAt(s: string, i: number): [cp: number, units: number] {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) {
      return [((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000, 2];
    }
  }
  return [c, 1];
}

/** utf8Length is the number of bytes of s in UTF-8. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; ) {
    const [cp, units] = codePointAt(s, i);
    n += utf8Size(cp);
    i += units;
  }
  return n;
}

/** wellFormed reports whether s has no lone surrogate, so that it has a UTF-8 form. */
export function wellFormed(s: string): boolean {
  for (let i = 0; i < s.length; ) {
    const [cp, units] = codePointAt(s, i);
    if (cp >= 0xd800 && cp <= 0xdfff) {
      return false;
    }
    i += units;
  }
  return true;
}

/**
 * decodeUTF8 is the string of bytes, or undefined when they are not valid
 * UTF-8 by Go's utf8.Valid (no overlong form, no surrogate, nothing past
 * U+10FFFF). A leading byte order mark is kept.
 */
export function decodeUTF8(bytes: Uint8Array): string | undefined {
  const units: number[] = [];
  const parts: string[] = [];
  const flush = (): void => {
    parts.push(String.fromCharCode(...units));
    units.length = 0;
  };
  const cont = (i: number): number => {
    const b = bytes[i];
    return b !== undefined && (b & 0xc0) === 0x80 ? b & 0x3f : -1;
  };
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] as number;
    let cp: number;
    let size: number;
    if (b < 0x80) {
      cp = b;
      size = 1;
    } else if (b >= 0xc2 && b <= 0xdf) {
      const c1 = cont(i + 1);
      if (c1 < 0) return undefined;
      cp = ((b & 0x1f) << 6) | c1;
      size = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      const c1 = cont(i + 1);
      const c2 = cont(i + 2);
      if (c1 < 0 || c2 < 0) return undefined;
      cp = ((b & 0x0f) << 12) | (c1 << 6) | c2;
      if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
      size = 3;
    } else if (b >= 0xf0 && b <= 0xf4) {
      const c1 = cont(i + 1);
      const c2 = cont(i + 2);
      const c3 = cont(i + 3);
      if (c1 < 0 || c2 < 0 || c3 < 0) return undefined;
      cp = ((b & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
      if (cp < 0x10000 || cp > 0x10ffff) return undefined;
      size = 4;
    } else {
      return undefined;
    }
    if (cp >= 0x10000) {
      units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
    } else {
      units.push(cp);
    }
    if (units.length >= 8192) flush();
    i += size;
  }
  flush();
  return parts.join("");
}

/**
 * sqsAllowed reports whether SQS accepts the code point in a message body:
 * U+0009, U+000A, U+000D, U+0020 to U+D7FF, U+E000 to U+FFFD and U+10000 to
 * U+10FFFF.
 */
export function sqsAllowed(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

/**
 * firstInvalidChar is the first character of s (well formed) that SQS
 * refuses, or with header true also a control character (C0 or DEL), with
 * its UTF-8 byte offset; undefined when there is none.
 */
export function firstInvalidChar(s: string, header: boolean): { cp: number; at: number } | undefined {
  let at = 0;
  for (let i = 0; i < s.length; ) {
    const [cp, units] = codePointAt(s, i);
    if ((header && (cp < 0x20 || cp === 0x7f)) || !sqsAllowed(cp)) {
      return { cp, at };
    }
    at += utf8Size(cp);
    i += units;
  }
  return undefined;
}

/**
 * truncate is Go's outbox.Truncate: s cut to at most n UTF-8 bytes at a
 * character boundary, with "…" at the end (within the n bytes) when it was cut.
 */
export function truncate(s: string, n: number): string {
  if (utf8Length(s) <= n) {
    return s;
  }
  const more = "…";
  const cut = Math.max(n - utf8Length(more), 0);
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const [cp, units] = codePointAt(s, i);
    if (bytes + utf8Size(cp) > cut) break;
    bytes += utf8Size(cp);
    i += units;
  }
  return s.slice(0, i) + more;
}

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const hex = (n: number, width: number): string => n.toString(16).padStart(width, "0");

/** goQuote is Go's strconv.Quote (fmt's %q) of s. */
export function goQuote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; ) {
    const [cp, units] = codePointAt(s, i);
    i += units;
    const ch = String.fromCodePoint(cp);
    if (cp >= 0xd800 && cp <= 0xdfff) {
      // Invalid UTF-8: Go quotes each byte (WTF-8's three here).
      out += `\\x${hex(0xe0 | (cp >> 12), 2)}\\x${hex(0x80 | ((cp >> 6) & 0x3f), 2)}\\x${hex(0x80 | (cp & 0x3f), 2)}`;
    } else if (cp === 0x22 || cp === 0x5c) {
      out += "\\" + ch;
    } else if (cp === 0x20 || (cp > 0x20 && cp < 0x7f) || (cp > 0x7f && printable.test(ch))) {
      out += ch;
    } else {
      const named: Record<number, string> = { 0x7: "\\a", 0x8: "\\b", 0xc: "\\f", 0xa: "\\n", 0xd: "\\r", 0x9: "\\t", 0xb: "\\v" };
      const name = named[cp];
      if (name !== undefined) out += name;
      else if (cp < 0x20 || cp === 0x7f) out += "\\x" + hex(cp, 2);
      else if (cp < 0x10000) out += "\\u" + hex(cp, 4);
      else out += "\\U" + hex(cp, 8);
    }
  }
  return out + '"';
}

/** formatU is Go's %U: "U+" and at least four uppercase hex digits. */
export function formatU(cp: number): string {
  return "U+" + cp.toString(16).toUpperCase().padStart(4, "0");
}

/** hex4 is Go's %04x. */
export function hex4(cp: number): string {
  return hex(cp, 4);
}
