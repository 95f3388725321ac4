package trace

import (
	"log/slog"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

func appendHex(b, v []byte) []byte {
	for _, c := range v {
		b = append(b, hexDigits[c>>4], hexDigits[c&0xf])
	}
	return b
}

// appendMillis appends d in milliseconds, to the microsecond.
func appendMillis(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', -1, 64)
}

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// appendAttrs appends attrs as a JSON object; with annotation, keys as
// X-Ray takes them (annotationKey) and values as strings, numbers or
// booleans only.
func appendAttrs(b []byte, attrs []slog.Attr, annotation bool) []byte {
	b = append(b, '{')
	b = appendMembers(b, attrs, annotation)
	return append(b, '}')
}

// appendMembers appends attrs as the members of a JSON object, without
// its braces.
func appendMembers(b []byte, attrs []slog.Attr, annotation bool) []byte {
	for i, a := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		key := a.Key
		if annotation {
			key = annotationKey(key)
		}
		b = appendString(b, key)
		b = append(b, ':')
		b = appendValue(b, a.Value.Resolve())
	}
	return b
}

// appendValue appends v as JSON: a number, a boolean, a duration in
// milliseconds, anything else its string.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return appendMillis(b, v.Duration())
	case slog.KindString:
		return appendString(b, v.String())
	}
	return appendString(b, v.String())
}
