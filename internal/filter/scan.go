package filter

import (
	"bytes"
	"encoding/json"
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

// elements calls fn with each element of the array sp until fn answers
// false, and answers false if fn did.
func elements(data []byte, sp span, fn func(val span) bool) bool {
	i := ws(data, sp.start+1)
	if i < sp.end && data[i] == ']' {
		return true
	}
	for i < sp.end {
		val := value(data, i)
		if val.kind == vNone || val.end > sp.end {
			return true
		}
		if !fn(val) {
			return false
		}
		i = ws(data, val.end)
		if i >= sp.end || data[i] != ',' {
			return true
		}
		i++
	}
	return true
}

// text is the string sp's content, unescaped; without escapes it is
// data's own bytes (no copy).
func text(data []byte, sp span) []byte {
	if sp.end-sp.start < 2 || sp.end > len(data) {
		return nil
	}
	raw := data[sp.start+1 : sp.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var s string
	if json.Unmarshal(data[sp.start:sp.end], &s) != nil {
		return raw
	}
	return []byte(s)
}
