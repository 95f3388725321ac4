package filter

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// op is a condition's operator.
type op uint8

const (
	opExact op = iota
	opPrefix
	opSuffix
	opEqualsIgnoreCase
	opAnythingBut // lits: none of them
	opAnythingButPrefix
	opAnythingButSuffix
	opAnythingButIgnoreCase
	opNumeric
	opExists
)

// cond is one condition on a leaf. Prefix and suffix conditions may ignore
// case (fold).
type cond struct {
	op     op
	fold   bool
	lits   []lit
	s      string
	exists bool
	ranges []bound
	work   int // cost(), kept
}

// kind is a JSON value's type.
type kind uint8

const (
	kindNone kind = iota
	kindString
	kindNumber
	kindTrue
	kindFalse
	kindNull
)

// lit is a constant: a string (s), a number (its text in s; q its
// quantized value when inRange), true, false or null.
type lit struct {
	kind    kind
	s       string
	q       int64
	inRange bool
}

// bound is one numeric comparison: the value compared with q.
type bound struct {
	cmp string
	q   int64
}

// operator parses an operator object: exactly one key.
func (p *parser) operator(obj map[string]any, path string) (cond, error) {
	if len(obj) != 1 {
		return cond{}, &Error{path, "an operator object has exactly one key (prefix, suffix, equals-ignore-case, anything-but, numeric, exists)"}
	}
	var key string
	var v any
	for key, v = range obj {
	}
	path += "." + key
	switch key {
	case "prefix", "suffix":
		return p.affix(key, v, path)
	case "equals-ignore-case":
		s, err := stringOperand(v, path, key)
		return cond{op: opEqualsIgnoreCase, s: s}, cmpErr(err, p.count(1, path))
	case "anything-but":
		return p.anythingBut(v, path)
	case "numeric":
		return p.numeric(v, path)
	case "exists":
		b, ok := v.(bool)
		if !ok {
			return cond{}, &Error{path, "exists needs true or false"}
		}
		return cond{op: opExists, exists: b}, p.count(1, path)
	}
	if unsupported(key) {
		return cond{}, &Error{path, key + " is an EventBridge operator hookline's filters do not support (docs/filters.md lists those they do)"}
	}
	return cond{}, &Error{path, "is not an operator: use prefix, suffix, equals-ignore-case, anything-but, numeric or exists"}
}

// cmpErr is the first of two errors.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// affix parses prefix or suffix: a string, or {"equals-ignore-case": s}.
func (p *parser) affix(key string, v any, path string) (cond, error) {
	c := cond{op: opPrefix}
	if key == "suffix" {
		c.op = opSuffix
	}
	if obj, ok := v.(map[string]any); ok {
		s, ok := obj["equals-ignore-case"].(string)
		if len(obj) != 1 || !ok {
			return cond{}, &Error{path, key + " needs a string or {\"equals-ignore-case\": string}"}
		}
		c.s, c.fold = s, true
		return c, p.count(1, path)
	}
	s, err := stringOperand(v, path, key)
	c.s = s
	return c, cmpErr(err, p.count(1, path))
}

// anythingBut parses anything-but: a string, a number, a list of strings
// or of numbers, or {"prefix"|"suffix"|"equals-ignore-case": s}.
func (p *parser) anythingBut(v any, path string) (cond, error) {
	switch v := v.(type) {
	case string, json.Number:
		if n, ok := v.(json.Number); ok {
			if err := checkDigits(n.String(), path); err != nil {
				return cond{}, err
			}
		}
		l, _ := literal(v, path, false)
		return cond{op: opAnythingBut, lits: []lit{l}}, p.count(1, path)
	case []any:
		return p.anythingButList(v, path)
	case map[string]any:
		if len(v) == 1 {
			for key, operand := range v {
				ops := map[string]op{"prefix": opAnythingButPrefix, "suffix": opAnythingButSuffix, "equals-ignore-case": opAnythingButIgnoreCase}
				o, known := ops[key]
				s, isString := operand.(string)
				if known && isString && s == "" && key != "equals-ignore-case" {
					return cond{}, &Error{path + "." + key, "anything-but " + key + " needs a non-empty string, as EventBridge refuses an empty one"}
				}
				if known && isString {
					return cond{op: o, s: s}, p.count(1, path)
				}
			}
		}
	}
	return cond{}, &Error{path, "anything-but needs a string, a number, a list of strings or of numbers, or {\"prefix\"|\"suffix\"|\"equals-ignore-case\": string}"}
}

// anythingButList parses anything-but's list: all strings or all numbers.
func (p *parser) anythingButList(vs []any, path string) (cond, error) {
	if len(vs) == 0 {
		return cond{}, &Error{path, "anything-but needs a non-empty list"}
	}
	c := cond{op: opAnythingBut}
	for i, v := range vs {
		l, err := literal(v, fmt.Sprintf("%s[%d]", path, i), false)
		if err != nil || (l.kind != kindString && l.kind != kindNumber) || (i > 0 && l.kind != c.lits[0].kind) {
			return cond{}, &Error{fmt.Sprintf("%s[%d]", path, i), "anything-but's list holds only strings or only numbers"}
		}
		if l.kind == kindNumber {
			if err := checkDigits(l.s, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return cond{}, err
			}
		}
		c.lits = append(c.lits, l)
	}
	return c, p.count(len(vs), path)
}

// numeric parses numeric: [op, n] or [">"|">=", lo, "<"|"<=", hi].
func (p *parser) numeric(v any, path string) (cond, error) {
	vs, ok := v.([]any)
	if !ok || (len(vs) != 2 && len(vs) != 4) {
		return cond{}, &Error{path, "numeric needs an operator and a number, or a lower and an upper bound: [\">=\", 100] or [\">\", 0, \"<=\", 5]"}
	}
	c := cond{op: opNumeric}
	var values []float64
	for i := 0; i < len(vs); i += 2 {
		cmp, ok := vs[i].(string)
		num, isNum := vs[i+1].(json.Number)
		if !ok || !isNum || !slices.Contains([]string{"<", "<=", "=", ">", ">="}, cmp) {
			return cond{}, &Error{path, "numeric needs an operator and a number: one of <, <=, =, >, >= followed by a number"}
		}
		if err := checkDigits(num.String(), path); err != nil {
			return cond{}, err
		}
		f, err := strconv.ParseFloat(num.String(), 64)
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > maxNumber {
			return cond{}, &Error{path, fmt.Sprintf("numeric compares numbers from %g to %g; %s is outside", -maxNumber, maxNumber, num)}
		}
		c.ranges, values = append(c.ranges, bound{cmp, quantize(f)}), append(values, f)
	}
	if len(vs) == 4 {
		lower := c.ranges[0].cmp == ">" || c.ranges[0].cmp == ">="
		upper := c.ranges[1].cmp == "<" || c.ranges[1].cmp == "<="
		if !lower || !upper || values[0] >= values[1] {
			return cond{}, &Error{path, "numeric with two comparisons needs a lower bound (> or >=) then a greater upper bound (< or <=)"}
		}
	}
	return c, p.count(len(values), path)
}
