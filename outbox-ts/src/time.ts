// Times as Go's outbox module reads and writes them, to the nanosecond:
// JavaScript's Date holds milliseconds only, so an occurred_at string is
// parsed here rather than through Date.

/** An instant: whole seconds since the Unix epoch and 0 <= nanos < 1e9. */
export interface Instant {
  seconds: number;
  nanos: number;
}

/** The seconds of Go's zero time.Time, 0001-01-01T00:00:00Z (IsZero). */
const zeroSeconds = -62135596800;

export function isZero(t: Instant): boolean {
  return t.seconds === zeroSeconds && t.nanos === 0;
}

// Days from 1970-01-01 of a proleptic Gregorian date, and back (Howard
// Hinnant's algorithms; Date.UTC maps years 0 to 99 to 1900 to 1999).
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [y: number, m: number, d: number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

function daysIn(month: number, year: number): number {
  if (month === 2) {
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39;

/**
 * parseRFC3339 reads s as Go's time.Parse(time.RFC3339Nano, s) does, with
 * its leniencies (a one-digit hour, a comma before the fraction, any number
 * of fraction digits of which nine count, offsets up to 24:60), or returns
 * undefined where Go returns an error.
 */
export function parseRFC3339(s: string): Instant | undefined {
  let v = s;
  // Go's getnum: one or two digits, exactly two when fixed.
  const num = (fixed: boolean): number | undefined => {
    if (!isDigit(v, 0)) return undefined;
    if (!isDigit(v, 1)) {
      if (fixed) return undefined;
      const n = v.charCodeAt(0) - 0x30;
      v = v.slice(1);
      return n;
    }
    const n = (v.charCodeAt(0) - 0x30) * 10 + (v.charCodeAt(1) - 0x30);
    v = v.slice(2);
    return n;
  };
  const lit = (c: string): boolean => {
    if (v[0] !== c) return false;
    v = v.slice(1);
    return true;
  };

  if (v.length < 4 || !/^[0-9]{4}/.test(v)) return undefined;
  const year = Number(v.slice(0, 4));
  v = v.slice(4);
  if (!lit("-")) return undefined;
  const month = num(true);
  if (month === undefined || month < 1 || month > 12 || !lit("-")) return undefined;
  const day = num(true);
  if (day === undefined || !lit("T")) return undefined;
  const hour = num(false);
  if (hour === undefined || hour >= 24 || !lit(":")) return undefined;
  const min = num(true);
  if (min === undefined || min >= 60 || !lit(":")) return undefined;
  const sec = num(true);
  if (sec === undefined || sec >= 60) return undefined;
  let nanos = 0;
  if (v.length >= 2 && (v[0] === "." || v[0] === ",") && isDigit(v, 1)) {
    let n = 1;
    while (isDigit(v, n)) n++;
    nanos = Number(v.slice(1, Math.min(n, 10)).padEnd(9, "0"));
    v = v.slice(n);
  }
  let offset = 0;
  if (v[0] === "Z") {
    v = v.slice(1);
  } else {
    if (v.length < 6 || v[3] !== ":" || !isDigit(v, 1) || !isDigit(v, 2) || !isDigit(v, 4) || !isDigit(v, 5)) return undefined;
    const hr = Number(v.slice(1, 3));
    const mm = Number(v.slice(4, 6));
    if (hr > 24 || mm > 60 || (v[0] !== "+" && v[0] !== "-")) return undefined;
    offset = (hr * 60 + mm) * 60 * (v[0] === "-" ? -1 : 1);
    v = v.slice(6);
  }
  if (v.length !== 0 || day < 1 || day > daysIn(month, year)) return undefined;
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
  return { seconds, nanos };
}

/** fromDate is d as an Instant, or undefined for an invalid Date. */
export function fromDate(d: Date): Instant | undefined {
  const ms = d.getTime();
  if (!Number.isFinite(ms)) return undefined;
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1e6 };
}

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

/**
 * formatRFC3339Nano is t in UTC as Go's Format(time.RFC3339Nano) writes it:
 * the fraction without its trailing zeros, none when it is zero.
 */
export function formatRFC3339Nano(t: Instant): string {
  const days = Math.floor(t.seconds / 86400);
  const rest = t.seconds - days * 86400;
  const [y, m, d] = civilFromDays(days);
  const year = y < 0 ? "-" + pad(-y, 4) : pad(y, 4);
  let out = `${year}-${pad(m, 2)}-${pad(d, 2)}T${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor(rest / 60) % 60, 2)}:${pad(rest % 60, 2)}`;
  if (t.nanos !== 0) {
    out += "." + pad(t.nanos, 9).replace(/0+$/, "");
  }
  return out + "Z";
}
