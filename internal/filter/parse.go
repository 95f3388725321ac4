package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The limits a filter is held to, each spelled once here; Parse's errors
// name the one broken.
const (
	// MaxBytes is the longest filter text, in bytes (as sent, before it is
	// stored compact).
	MaxBytes = 4096
	// MaxDepth is the deepest nesting of pattern objects: the filter itself
	// is depth 1, each nested object or $or branch one more.
	MaxDepth = 5
	// MaxValues is the most constants a filter holds in total: every exact
	// value, every operand (each number of a numeric condition, each value
	// of an anything-but list) counts one.
	MaxValues = 100
	// maxNumber bounds the numbers numeric comparisons work on: EventBridge
	// compares numbers within ±5e9, to six decimal places.
	maxNumber = 5e9
)

// Error is what is wrong with a filter, and where: Path is the field's
// path from "filter" (filter.amount[0]), Message what is wrong there.
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string { return e.Path + ": " + e.Message }

// Filter is a parsed filter, safe for concurrent use.
type Filter struct {
	root *level
	text string
}

// String is the filter's compact JSON text.
func (f *Filter) String() string { return f.text }

// level is a pattern on one JSON object: the keys it (and its $or
// branches) read, and the pattern.
type level struct {
	keys []string
	root *node
}

// node is a pattern on an object: every field must match, and each $or
// group must have a branch that matches.
type node struct {
	fields []field
	ors    [][]*node
}

// field is one key's pattern: conditions on its leaves, or a nested
// pattern (sub).
type field struct {
	slot  int // index into the level's keys
	conds []cond
	sub   *level
}

// parser holds Parse's state: the values counted so far.
type parser struct{ values int }

// Parse validates a filter's JSON text and returns it parsed.
func Parse(text []byte) (*Filter, error) {
	if len(text) > MaxBytes {
		return nil, &Error{"filter", fmt.Sprintf("is %d bytes, at most %d (MaxBytes)", len(text), MaxBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Error{"filter", "is not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return nil, &Error{"filter", "has data after the JSON object"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{"filter", "must be a JSON object of field patterns"}
	}
	if len(obj) == 0 {
		return nil, &Error{"filter", "names no field: an empty filter would match every event (leave it out, or null, instead)"}
	}
	var p parser
	lv, err := p.level(obj, "filter", 1)
	if err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, text); err != nil {
		return nil, &Error{"filter", "is not valid JSON: " + err.Error()}
	}
	return &Filter{root: lv, text: compact.String()}, nil
}

// level parses obj as a pattern on one object, with its own key slots.
func (p *parser) level(obj map[string]any, path string, depth int) (*level, error) {
	lv := &level{}
	n, err := p.node(obj, path, depth, lv)
	if err != nil {
		return nil, err
	}
	lv.root = n
	return lv, nil
}

// node parses obj's fields and $or groups into lv's slots.
func (p *parser) node(obj map[string]any, path string, depth int, lv *level) (*node, error) {
	if depth > MaxDepth {
		return nil, &Error{path, fmt.Sprintf("nests deeper than %d objects (MaxDepth)", MaxDepth)}
	}
	n := &node{}
	for _, key := range slices.Sorted(mapsKeys(obj)) {
		fpath := path + "." + key
		if key == "$or" {
			group, err := p.or(obj[key], fpath, depth, lv)
			if err != nil {
				return nil, err
			}
			n.ors = append(n.ors, group)
			continue
		}
		f := field{slot: lv.slot(key)}
		switch v := obj[key].(type) {
		case []any:
			conds, err := p.conds(v, fpath)
			if err != nil {
				return nil, err
			}
			f.conds = conds
		case map[string]any:
			if len(v) == 0 {
				return nil, &Error{fpath, "is an empty object: name a field in it, or give an array of values"}
			}
			sub, err := p.level(v, fpath, depth+1)
			if err != nil {
				return nil, err
			}
			f.sub = sub
		default:
			return nil, &Error{fpath, "must be an array of values (\"country\": [\"DE\"]) or a nested object"}
		}
		n.fields = append(n.fields, f)
	}
	return n, nil
}

// or parses a $or group: two or more patterns on the same object.
func (p *parser) or(v any, path string, depth int, lv *level) ([]*node, error) {
	branches, ok := v.([]any)
	if !ok || len(branches) < 2 {
		return nil, &Error{path, "must be an array of at least 2 patterns"}
	}
	group := make([]*node, 0, len(branches))
	for i, b := range branches {
		bpath := fmt.Sprintf("%s[%d]", path, i)
		obj, ok := b.(map[string]any)
		if !ok || len(obj) == 0 {
			return nil, &Error{bpath, "must be a pattern object naming at least one field"}
		}
		n, err := p.node(obj, bpath, depth+1, lv)
		if err != nil {
			return nil, err
		}
		group = append(group, n)
	}
	return group, nil
}

// slot is key's index among the level's keys, added if new.
func (lv *level) slot(key string) int {
	if i := slices.Index(lv.keys, key); i >= 0 {
		return i
	}
	lv.keys = append(lv.keys, key)
	return len(lv.keys) - 1
}

// count adds n constants, or fails past MaxValues.
func (p *parser) count(n int, path string) error {
	p.values += n
	if p.values > MaxValues {
		return &Error{path, fmt.Sprintf("takes the filter over %d values (MaxValues)", MaxValues)}
	}
	return nil
}

// conds parses a field's array of conditions.
func (p *parser) conds(vs []any, path string) ([]cond, error) {
	if len(vs) == 0 {
		return nil, &Error{path, "is an empty array: give at least one value"}
	}
	conds := make([]cond, 0, len(vs))
	for i, v := range vs {
		cpath := fmt.Sprintf("%s[%d]", path, i)
		c, err := p.cond(v, cpath)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return conds, nil
}

// cond parses one condition: an exact value or an operator object.
func (p *parser) cond(v any, path string) (cond, error) {
	if obj, ok := v.(map[string]any); ok {
		return p.operator(obj, path)
	}
	if err := p.count(1, path); err != nil {
		return cond{}, err
	}
	l, err := literal(v, path, true)
	return cond{op: opExact, lits: []lit{l}}, err
}

// literal parses an exact value: a string, a number, true, false, or null
// when nullOK.
func literal(v any, path string, nullOK bool) (lit, error) {
	switch v := v.(type) {
	case string:
		return lit{kind: kindString, s: v}, nil
	case json.Number:
		return numberLit(v.String()), nil
	case bool:
		if v {
			return lit{kind: kindTrue}, nil
		}
		return lit{kind: kindFalse}, nil
	case nil:
		if nullOK {
			return lit{kind: kindNull}, nil
		}
	}
	return lit{}, &Error{path, "must be a string, a number, true, false, null or an operator object"}
}

// numberLit is a number constant: its text, and its value when numeric
// comparison can use it.
func numberLit(text string) lit {
	l := lit{kind: kindNumber, s: text}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && math.Abs(f) <= maxNumber {
		l.q, l.inRange = quantize(f), true
	}
	return l
}

// quantize is EventBridge's comparable form of a number within ±5e9:
// micro-units above -5e9, truncated (Event Ruler's ComparableNumber).
func quantize(f float64) int64 { return int64(1e6 * (maxNumber + f)) }

// mapsKeys is the keys of m.
func mapsKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// stringOperand is an operator's string operand.
func stringOperand(v any, path, op string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", &Error{path, op + " needs a string"}
	}
	return s, nil
}

// unsupported reports whether key names an EventBridge operator that this
// subset leaves out, to say so rather than call it unknown.
func unsupported(key string) bool {
	return slices.Contains([]string{"wildcard", "cidr", "exactly", "contains"}, key) || strings.HasPrefix(key, "$")
}
