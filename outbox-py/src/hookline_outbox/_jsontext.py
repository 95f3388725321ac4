"""JSON syntax as Go's encoding/json.Valid reads it, and Go's PayloadDepth.

Python's json module is not that check: it accepts NaN, Infinity and
-Infinity, refuses integers of more than 4300 digits (int_max_str_digits)
and recurses (RecursionError on deep documents). This is RFC 8259's grammar
over bytes, iterative, with nothing decoded: one JSON value, whitespace
(space, tab, LF, CR) around it.
"""

from __future__ import annotations

import re

_WS = re.compile(rb"[ \t\n\r]*")
# A string: no raw byte below 0x20, escapes \" \\ \/ \b \f \n \r \t \uXXXX.
_STRING = re.compile(rb'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = (b"true", b"false", b"null")


def valid_json(data: bytes) -> bool:
    """Reports whether data is exactly one JSON document (Go's json.Valid)."""
    n = len(data)
    # stack of open containers: b"{" or b"["
    stack: list[int] = []
    i = _WS.match(data, 0).end()
    while True:
        # expect a value at i
        if i >= n:
            return False
        c = data[i]
        if c == 0x7B:  # {
            i = _WS.match(data, i + 1).end()
            if i < n and data[i] == 0x7D:  # {}
                i += 1
            else:
                stack.append(0x7B)
                m = _STRING.match(data, i)
                if m is None:
                    return False
                i = _WS.match(data, m.end()).end()
                if i >= n or data[i] != 0x3A:  # :
                    return False
                i = _WS.match(data, i + 1).end()
                continue
        elif c == 0x5B:  # [
            i = _WS.match(data, i + 1).end()
            if i < n and data[i] == 0x5D:  # []
                i += 1
            else:
                stack.append(0x5B)
                continue
        elif c == 0x22:  # "
            m = _STRING.match(data, i)
            if m is None:
                return False
            i = m.end()
        elif c == 0x2D or 0x30 <= c <= 0x39:  # - 0-9
            m = _NUMBER.match(data, i)
            if m is None:
                return False
            i = m.end()
        else:
            for lit in _LITERALS:
                if data.startswith(lit, i):
                    i += len(lit)
                    break
            else:
                return False
        # after a value: close containers or go on to the next member
        while True:
            i = _WS.match(data, i).end()
            if not stack:
                return i == n
            if i >= n:
                return False
            c = data[i]
            top = stack[-1]
            if c == 0x2C:  # ,
                i = _WS.match(data, i + 1).end()
                if top == 0x7B:
                    m = _STRING.match(data, i)
                    if m is None:
                        return False
                    i = _WS.match(data, m.end()).end()
                    if i >= n or data[i] != 0x3A:
                        return False
                    i = _WS.match(data, i + 1).end()
                break  # a value follows
            if (top == 0x7B and c == 0x7D) or (top == 0x5B and c == 0x5D):
                stack.pop()
                i += 1
                continue
            return False


# Go's PayloadDepth skips a string from its quote to the next unescaped
# quote (a backslash skips the byte after it), and counts brackets.
_DEPTH_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[{}\[\]]', re.DOTALL)


def payload_depth(data: bytes) -> int:
    """How deep data nests objects and arrays (Go's PayloadDepth): a scalar
    is 0, {} and [] are 1, counted outside strings in one pass."""
    depth = deepest = 0
    for m in _DEPTH_TOKENS.finditer(data):
        c = data[m.start()]
        if c == 0x7B or c == 0x5B:
            depth += 1
            if depth > deepest:
                deepest = depth
        elif c == 0x7D or c == 0x5D:
            depth -= 1
    return deepest
