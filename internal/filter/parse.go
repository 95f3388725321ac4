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
	// factor bounds matching's work per byte of a document: each pattern
	// level reads a byte at most 3 times (its object's members, a key's
	// leaves, a key's array of objects), and each leaf (a byte at least)
	// is tried against at most every condition.
	factor int
}

// String is the filter's compact JSON text.
func (f *Filter) String() string { return f.text }

// level is the patterns on one JSON object: the keys they read, each
// key's conditions on leaves (leaves) and nested patterns (subs), and the
// patterns themselves (roots). Every field of every pattern on the object,
// $or branches included, shares the level: matching reads the object's
// members once, walks each key's leaves once for all the conditions on
// it, and evaluates the nested patterns on one key (one per $or branch
// naming it) as the roots of one sub-level, in one walk.
type level struct {
	keys   []string
	index  map[string]int // keys' slots, when there are many
	leaves []leafField
	bySlot [][]int // bySlot[slot]: the leaves on that key
	subs   []subField
	roots  []*node
}

// leafField is the conditions of one field of one pattern on a key.
type leafField struct {
	slot  int
	conds []cond
}

// subField is the nested patterns on one key, as roots of a sub-level;
// off is where their results start among the level's sub results.
type subField struct {
	slot int
	lv   *level
	off  int
}

// node is a pattern on an object: every field must match, and each $or
// group must have a branch that matches.
type node struct {
	fields []ref
	ors    [][]*node
}

// ref is a node's field: a leaf field (leaf >= 0) or the root root of a
// sub-level (sub).
type ref struct {
	leaf, sub, root int
}

// parser holds Parse's state: the values counted so far.
type parser struct {
	values int
	work   int // the conditions' work on one leaf, in all
	depth  int // the deepest level
}

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
	lv := &level{}
	if _, err := p.root(obj, "filter", 1, lv); err != nil {
		return nil, err
	}
	lv.finish()
	factor := 3*p.depth + p.work
	var compact bytes.Buffer
	if err := json.Compact(&compact, text); err != nil {
		return nil, &Error{"filter", "is not valid JSON: " + err.Error()}
	}
	return &Filter{root: lv, text: compact.String(), factor: factor}, nil
}

// root parses obj as one more pattern (root) on lv's object.
func (p *parser) root(obj map[string]any, path string, depth int, lv *level) (int, error) {
	n, err := p.node(obj, path, depth, lv)
	if err != nil {
		return 0, err
	}
	lv.roots = append(lv.roots, n)
	return len(lv.roots) - 1, nil
}

// finish indexes lv's keys and leaves, and its sub-levels'.
func (lv *level) finish() {
	if len(lv.keys) > indexFrom {
		lv.index = make(map[string]int, len(lv.keys))
		for i, k := range lv.keys {
			lv.index[k] = i
		}
	}
	lv.bySlot = make([][]int, len(lv.keys))
	for i, l := range lv.leaves {
		lv.bySlot[l.slot] = append(lv.bySlot[l.slot], i)
	}
	off := 0
	for i := range lv.subs {
		lv.subs[i].off = off
		off += len(lv.subs[i].lv.roots)
		lv.subs[i].lv.finish()
	}
}

// indexFrom is how many keys a level compares one by one before it looks
// them up in a map instead.
const indexFrom = 8

// node parses obj's fields and $or groups into lv's slots.
func (p *parser) node(obj map[string]any, path string, depth int, lv *level) (*node, error) {
	if depth > MaxDepth {
		return nil, &Error{path, fmt.Sprintf("nests deeper than %d objects (MaxDepth)", MaxDepth)}
	}
	p.depth = max(p.depth, depth)
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
		slot := lv.slot(key)
		switch v := obj[key].(type) {
		case []any:
			conds, err := p.conds(v, fpath)
			if err != nil {
				return nil, err
			}
			lv.leaves = append(lv.leaves, leafField{slot: slot, conds: conds})
			n.fields = append(n.fields, ref{leaf: len(lv.leaves) - 1})
		case map[string]any:
			if len(v) == 0 {
				return nil, &Error{fpath, "is an empty object: name a field in it, or give an array of values"}
			}
			si := lv.sub(slot)
			r, err := p.root(v, fpath, depth+1, lv.subs[si].lv)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, ref{leaf: -1, sub: si, root: r})
		default:
			return nil, &Error{fpath, "must be an array of values (\"country\": [\"DE\"]) or a nested object"}
		}
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
		for key := range obj {
			if operatorName(key) {
				return nil, &Error{bpath + "." + key, "is named like an operator: EventBridge refuses a field so named inside $or"}
			}
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

// sub is the index of the sub-level on slot, added if new.
func (lv *level) sub(slot int) int {
	for i, s := range lv.subs {
		if s.slot == slot {
			return i
		}
	}
	lv.subs = append(lv.subs, subField{slot: slot, lv: &level{}})
	return len(lv.subs) - 1
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
		c.work = c.cost()
		p.work += c.work
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

// operatorName reports whether key is the name of an EventBridge
// comparison operator.
func operatorName(key string) bool {
	return slices.Contains([]string{"prefix", "suffix", "equals-ignore-case", "anything-but", "numeric", "exists", "wildcard", "cidr"}, key)
}

// MaxSignificantDigits is the most significant digits a numeric or
// anything-but operand may have: EventBridge refuses 17 or more, past
// what a float64 holds exactly.
const MaxSignificantDigits = 16

// significantDigits counts the digits of a JSON number's mantissa from its
// first non-zero digit to its last.
func significantDigits(text string) int {
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		text = text[:i]
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, text)
	return len(strings.TrimRight(strings.TrimLeft(digits, "0"), "0"))
}

// checkDigits refuses an operand of more than MaxSignificantDigits.
func checkDigits(num, path string) error {
	if significantDigits(num) > MaxSignificantDigits {
		return &Error{path, fmt.Sprintf("%s has more than %d significant digits (MaxSignificantDigits), as EventBridge refuses", num, MaxSignificantDigits)}
	}
	return nil
}

// unsupported reports whether key names an EventBridge operator that this
// subset leaves out, to say so rather than call it unknown.
func unsupported(key string) bool {
	return slices.Contains([]string{"wildcard", "cidr", "exactly", "contains"}, key) || strings.HasPrefix(key, "$")
}
