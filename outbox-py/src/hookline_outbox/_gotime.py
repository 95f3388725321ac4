"""Times as Go's time package reads and writes them, to the nanosecond.

Python's datetime keeps microseconds; an occurred_at of
"2026-12-07T10:00:00.123456789Z" is kept whole here, as (unix seconds,
nanoseconds), and written back as Go's RFC3339Nano in UTC.
"""

from __future__ import annotations

from typing import Optional, Tuple

# A time: unix seconds (floor) and nanoseconds (0 <= ns < 1e9).
GoTime = Tuple[int, int]

# Go's zero time.Time, 0001-01-01T00:00:00Z: IsZero, so "not given".
ZERO: GoTime = (-62135596800, 0)


def _days_from_civil(y: int, m: int, d: int) -> int:
    # Howard Hinnant's days_from_civil, proleptic Gregorian, any year.
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> Tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool) -> Optional[Tuple[int, str]]:
    # Go's getnum: one or two digits; fixed requires two.
    if not _digit(s, 0):
        return None
    if not _digit(s, 1):
        if fixed:
            return None
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def parse_rfc3339(value: str) -> Optional[GoTime]:
    """value as Go's time.Parse(time.RFC3339Nano, value) reads it, or None.

    Go's general parser for the layout "2006-01-02T15:04:05.999999999Z07:00"
    (its RFC 3339 fast path accepts a subset of it, with the same result):
    a 4-digit year; 2-digit month, day, minute and second; a 1- or 2-digit
    hour; a fraction after "." or "," of any length, cut to nanoseconds;
    "Z" or an offset +hh:mm / -hh:mm (hours up to 24, minutes up to 60).
    """
    s = value
    if len(s) < 4 or not all("0" <= c <= "9" for c in s[:4]):
        return None
    year, s = int(s[:4]), s[4:]
    if not s.startswith("-"):
        return None
    r = _getnum(s[1:], True)
    if r is None or not 1 <= r[0] <= 12:
        return None
    month, s = r
    if not s.startswith("-"):
        return None
    r = _getnum(s[1:], True)
    if r is None:
        return None
    day, s = r
    if not s.startswith("T"):
        return None
    r = _getnum(s[1:], False)
    if r is None or not 0 <= r[0] < 24:
        return None
    hour, s = r
    if not s.startswith(":"):
        return None
    r = _getnum(s[1:], True)
    if r is None or not 0 <= r[0] < 60:
        return None
    minute, s = r
    if not s.startswith(":"):
        return None
    r = _getnum(s[1:], True)
    if r is None or not 0 <= r[0] < 60:
        return None
    sec, s = r
    nsec = 0
    if len(s) >= 2 and s[0] in ".," and _digit(s, 1):
        n = 1
        while _digit(s, n):
            n += 1
        digits = s[1:n][:9]
        nsec = int(digits) * 10 ** (9 - len(digits))
        s = s[n:]
    offset = 0
    if s.startswith("Z"):
        s = s[1:]
    else:
        if len(s) < 6 or s[3] != ":":
            return None
        sign, hh, mm, s = s[0], s[1:3], s[4:6], s[6:]
        h = _getnum(hh, True)
        m = _getnum(mm, True)
        if h is None or m is None or h[0] > 24 or m[0] > 60 or sign not in "+-":
            return None
        offset = (h[0] * 60 + m[0]) * 60
        if sign == "-":
            offset = -offset
    if s:
        return None
    if day < 1 or day > _days_in(month, year):
        return None
    unix = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec - offset
    return unix, nsec


def format_rfc3339nano(t: GoTime) -> str:
    """t in UTC as Go's t.UTC().Format(time.RFC3339Nano): the fraction's
    trailing zeros removed, none when it is zero."""
    unix, nsec = t
    days, rem = divmod(unix, 86400)
    y, m, d = _civil_from_days(days)
    hh, rem = divmod(rem, 3600)
    mi, ss = divmod(rem, 60)
    year = "-%04d" % -y if y < 0 else "%04d" % y
    frac = ""
    if nsec:
        frac = "." + ("%09d" % nsec).rstrip("0")
    return "%s-%02d-%02dT%02d:%02d:%02d%sZ" % (year, m, d, hh, mi, ss, frac)
