package filter

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// span is one JSON value of a document: its kind and its bytes
// data[start:end] (a string's with its quotes). The zero span is a value
// that is not there.
type span struct {
	kind       vkind
	start, end int
}

// vkind is a value's kind as the scanner sees it.
type vkind uint8

const (
	vNone vkind = iota
	vString
	vNumber
	vTrue
	vFalse
	vNull
	vArray
	vObject
)

// maxDataDepth bounds how deep Match follows arrays nested in arrays: a
// leaf deeper than that is not matched (no event of a webhook's is
// shaped so; the bound keeps hostile input from running deep).
const maxDataDepth = 256

// ws skips whitespace from i.
func ws(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value scans the value that starts at i (after whitespace), or answers
// the zero span when there is none. It checks only what it needs to find
// the value's end: an invalid document gives wrong spans, never a panic.
func value(data []byte, i int) span {
	i = ws(data, i)
	if i >= len(data) {
		return span{}
	}
	switch c := data[i]; {
	case c == '"':
		return span{vString, i, stringEnd(data, i)}
	case c == '{' || c == '[':
		k := vObject
		if c == '[' {
			k = vArray
		}
		return span{k, i, containerEnd(data, i)}
	case c == 't':
		return span{vTrue, i, min(i+4, len(data))}
	case c == 'f':
		return span{vFalse, i, min(i+5, len(data))}
	case c == 'n':
		return span{vNull, i, min(i+4, len(data))}
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(data) && numberByte(data[j]) {
			j++
		}
		return span{vNumber, i, j}
	}
	return span{}
}

// numberByte reports whether c can be in a JSON number.
func numberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'
}

// stringEnd is the index after the string that opens at i.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// containerEnd is the index after the object or array that opens at i,
// counting brackets outside strings.
func containerEnd(data []byte, i int) int {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			j = stringEnd(data, j) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(data)
}

// members calls fn with each key (a string span) and value of the object
// sp, in order, until fn answers false.
func members(data []byte, sp span, fn func(key, val span) bool) {
	i := sp.start + 1
	for {
		i = ws(data, i)
		if i >= sp.end || data[i] != '"' {
			return
		}
		key := span{vString, i, stringEnd(data, i)}
		i = ws(data, key.end)
		if i >= sp.end || data[i] != ':' {
			return
		}
		val := value(data, i+1)
		if val.kind == vNone || !fn(key, val) {
			return
		}
		i = ws(data, val.end)
		if i >= sp.end || data[i] != ',' {
			return
		}
		i++
	}
}

// text is the string sp's content, unescaped; without escapes it is the
// document's own bytes (no copy), with them st's scratch buffer, valid
// until the next call: unescaping allocates nothing once the buffer has
// grown to the longest string.
func (st *state) text(sp span) []byte {
	data := st.data
	if sp.end-sp.start < 2 || sp.end > len(data) {
		return nil
	}
	raw := data[sp.start+1 : sp.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	st.scratch = unescape(st.scratch[:0], raw)
	return st.scratch
}

// unescape appends raw (a JSON string's content) to dst with its escapes
// decoded as encoding/json decodes them: a lone or broken surrogate is
// U+FFFD, and so is a broken escape.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return utf8.AppendRune(dst, utf8.RuneError)
		}
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			dst = append(dst, e)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				return utf8.AppendRune(dst, utf8.RuneError)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2, ok := hex4(raw, i+2); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return utf8.AppendRune(dst, utf8.RuneError)
		}
		i += 2
	}
	return dst
}

// hex4 is the rune of the four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
