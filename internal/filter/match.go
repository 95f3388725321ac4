package filter

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Outcome is what matching a document gives.
type Outcome uint8

const (
	// NotMatched: the document does not match; the event does not go to
	// the endpoint.
	NotMatched Outcome = iota
	// Matched: the document matches.
	Matched
	// OverBudget: matching would cost more than its budget (Budget) and
	// stopped; callers treat the filter as a broken one: the event goes to
	// the endpoint unfiltered, counted (docs/filters.md).
	OverBudget
)

// The work budget. Work counts the bytes matching scans and compares: each
// object whose members it reads and each value whose leaves or objects it
// walks counts its length once, each condition tried on a leaf counts its
// operand's length plus one. Matching is linear in the document, so a
// filter's work is at most a constant (its own: about 3 per pattern level
// plus its conditions' operands on a leaf) times the document's length;
// the budget cuts off the filters whose constant is unusually large, on
// documents built to exploit it.
const (
	// WorkPerByte is the budget's work per byte of the document: 128,
	// above every filter of the unit tests' table and of the docs'
	// examples on any document (a filter on a few fields spends 2 to 3 a
	// byte; the tests' hostile shapes up to about 100). A unit costs 2.5
	// to 5 ns on one core (BenchmarkMatchCost), so a filter at the budget
	// spends at most about 0.6 ms a KiB of payload.
	WorkPerByte = 128
	// WorkBase is the budget's work before the document's length, so that
	// small documents are never cut off: a MaxBytes filter's worth of
	// operands on 16 leaves.
	WorkBase = 16 * (MaxBytes + MaxValues)
)

// Budget is the work matching a document of n bytes may take.
func Budget(n int) int { return WorkPerByte*n + WorkBase }

// Match reports whether the event goes to the filter's endpoint: the
// document data (an event's data) matches, or matching it ran over its
// budget (Eval says which). A nil filter matches everything.
func (f *Filter) Match(data []byte) bool { return f.Eval(data) != NotMatched }

// Eval matches the JSON document data within Budget(len(data)).
func (f *Filter) Eval(data []byte) Outcome {
	o, _ := f.EvalWithin(data, Budget(len(data)))
	return o
}

// EvalWithin matches data within budget (work units), and says how much
// work it took. It stops soon after the work passes budget, with
// OverBudget; a budget of 0 or less is OverBudget at once (for a caller
// whose own budget is spent), except for a nil filter.
func (f *Filter) EvalWithin(data []byte, budget int) (Outcome, int) {
	if f == nil {
		return Matched, 0
	}
	if budget <= 0 {
		return OverBudget, 0
	}
	st := states.Get().(*state)
	st.data, st.work, st.budget, st.over = data, 0, budget, false
	sp := value(data, 0)
	if sp.kind != vObject {
		sp = span{}
	}
	out := st.pushBools(1)
	f.root.eval(st, sp, out)
	matched, work, over := out[0], st.work, st.over
	st.bools, st.spans, st.data = st.bools[:0], st.spans[:0], nil
	states.Put(st)
	switch {
	case over:
		return OverBudget, work
	case matched:
		return Matched, work
	}
	return NotMatched, work
}

// state is one evaluation's: the document, the work done, and stacks for
// the levels' slots and results, kept between evaluations (states) so
// that matching allocates nothing once warm.
type state struct {
	data         []byte
	work, budget int
	over         bool
	bools        []bool
	spans        []span
	scratch      []byte // a string unescaped
}

var states = sync.Pool{New: func() any { return new(state) }}

// pushBools is n false results on the stack.
func (st *state) pushBools(n int) []bool {
	m := len(st.bools)
	st.bools = slices.Grow(st.bools, n)[:m+n]
	b := st.bools[m : m+n]
	clear(b)
	return b
}

// pushSpans is n zero spans on the stack.
func (st *state) pushSpans(n int) []span {
	m := len(st.spans)
	st.spans = slices.Grow(st.spans, n)[:m+n]
	b := st.spans[m : m+n]
	clear(b)
	return b
}

// spend adds n work, and says whether the budget still holds.
func (st *state) spend(n int) bool {
	st.work += n
	if st.work > st.budget {
		st.over = true
	}
	return !st.over
}

// eval sets out[r] for each root r of lv that matches the object sp (the
// zero span: an object with no field); a result already true stays so.
func (lv *level) eval(st *state, sp span, out []bool) {
	nb, ns := len(st.bools), len(st.spans)
	defer func() { st.bools, st.spans = st.bools[:nb], st.spans[:ns] }()
	data := st.data
	slots := st.pushSpans(len(lv.keys))
	if sp.kind == vObject && st.spend(sp.end-sp.start) {
		members(data, sp, func(key, val span) bool {
			if i := lv.lookup(st, key); i >= 0 {
				slots[i] = val // a repeated key: the last one counts, as in encoding/json
			}
			return true
		})
	}
	leafRes := st.pushBools(len(lv.leaves))
	for slot, ls := range lv.bySlot {
		if len(ls) > 0 && !st.over {
			lv.evalLeaves(st, ls, slots[slot], leafRes)
		}
	}
	subRes := st.pushBools(lv.subBools())
	for i := range lv.subs {
		if !st.over {
			s := &lv.subs[i]
			s.lv.evalValue(st, slots[s.slot], subRes[s.off:s.off+len(s.lv.roots)])
		}
	}
	if st.over {
		return
	}
	for r, n := range lv.roots {
		out[r] = out[r] || n.eval(leafRes, subRes, lv.subs)
	}
}

// subBools is how many results lv's sub-levels have.
func (lv *level) subBools() int {
	if len(lv.subs) == 0 {
		return 0
	}
	last := lv.subs[len(lv.subs)-1]
	return last.off + len(last.lv.roots)
}

// lookup is the slot of the key span key, or -1.
func (lv *level) lookup(st *state, key span) int {
	k := st.text(key)
	if lv.index != nil {
		if i, ok := lv.index[string(k)]; ok {
			return i
		}
		return -1
	}
	for i, want := range lv.keys {
		if string(k) == want {
			return i
		}
	}
	return -1
}

// eval evaluates n on one object's results.
func (n *node) eval(leafRes, subRes []bool, subs []subField) bool {
	for _, f := range n.fields {
		if f.leaf >= 0 {
			if !leafRes[f.leaf] {
				return false
			}
		} else if !subRes[subs[f.sub].off+f.root] {
			return false
		}
	}
	for _, group := range n.ors {
		ok := false
		for _, b := range group {
			if b.eval(leafRes, subRes, subs) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// evalValue evaluates lv's roots on a field's value: on the object, on
// each object element of an array (arrays within arrays too), a root
// matching when one element does; and otherwise (absent, a scalar, no
// object in the array) on an object with no field, as EventBridge does.
func (lv *level) evalValue(st *state, sp span, out []bool) {
	switch sp.kind {
	case vObject:
		lv.eval(st, sp, out)
		return
	case vArray:
		if !st.spend(sp.end - sp.start) {
			return
		}
		found := false
		walk(st.data, sp.start, 0, func(el span) bool {
			if el.kind != vObject {
				return true
			}
			found = true
			lv.eval(st, el, out)
			return !st.over && !allTrue(out)
		})
		if found {
			return
		}
	}
	lv.eval(st, span{}, out)
}

// allTrue reports whether every result is true.
func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// evalLeaves evaluates the leaf fields ls, all on the value sp, in one walk
// of its leaves: exists on whether it reaches a leaf, the other conditions
// on any of its leaves.
func (lv *level) evalLeaves(st *state, ls []int, sp span, res []bool) {
	hasLeaf, open := false, 0
	for _, li := range ls {
		for _, c := range lv.leaves[li].conds {
			if c.op != opExists {
				open++
				break
			}
		}
	}
	if sp.kind != vNone && st.spend(sp.end-sp.start) {
		walk(st.data, sp.start, 0, func(leaf span) bool {
			if leaf.kind == vObject {
				return true
			}
			hasLeaf = true
			if open == 0 {
				return false
			}
			sc := scalar{st: st, sp: leaf}
			for _, li := range ls {
				if res[li] {
					continue
				}
				conds := lv.leaves[li].conds
				for i := range conds {
					if conds[i].op != opExists && st.spend(conds[i].work) && conds[i].match(&sc) {
						res[li] = true
						open--
						break
					}
				}
			}
			return open > 0 && !st.over
		})
	}
	for _, li := range ls {
		for _, c := range lv.leaves[li].conds {
			if c.op == opExists && c.exists == hasLeaf {
				res[li] = true
			}
		}
	}
}

// cost is the work of trying c on one leaf: its operand's length, plus one.
func (c *cond) cost() int {
	n := 1 + len(c.s)
	for i := range c.lits {
		n += 1 + len(c.lits[i].s)
	}
	return n + len(c.ranges)
}

// walk calls fn with the value that starts at i, after whitespace, or, if
// it is an array, with each of its elements, looking into arrays within
// arrays (to maxDataDepth; deeper ones are skipped), until fn answers
// false; objects are passed whole, not looked into. It answers the index after the value and
// false if fn did. It reads each byte once, however deep the arrays.
func walk(data []byte, i, depth int, fn func(span) bool) (int, bool) {
	i = ws(data, i)
	if i >= len(data) || data[i] != '[' {
		v := value(data, i)
		if v.kind == vNone {
			return max(i, v.end), true
		}
		return v.end, fn(v)
	}
	if depth >= maxDataDepth {
		return containerEnd(data, i), true
	}
	i = ws(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for i < len(data) {
		end, ok := walk(data, i, depth+1, fn)
		if !ok {
			return end, false
		}
		if end <= i {
			return len(data), true // not JSON: stop
		}
		i = ws(data, end)
		if i >= len(data) || data[i] != ',' {
			if i < len(data) && data[i] == ']' {
				i++
			}
			return i, true
		}
		i++
	}
	return i, true
}

// scalar is one leaf being matched, with its number parsed and its
// string unescaped once, however many conditions read it.
type scalar struct {
	st      *state
	sp      span
	parsed  bool
	q       int64
	inRange bool
	read    bool
	text    []byte // st.text's answer: valid while this leaf is matched
}

// str is the leaf's string content, and whether it is a string.
func (s *scalar) str() ([]byte, bool) {
	if s.sp.kind != vString {
		return nil, false
	}
	if !s.read {
		s.read, s.text = true, s.st.text(s.sp)
	}
	return s.text, true
}

// number is the leaf's quantized value, if it is a number within ±5e9.
func (s *scalar) number() (int64, bool) {
	if s.sp.kind != vNumber {
		return 0, false
	}
	if !s.parsed {
		s.parsed = true
		f, err := strconv.ParseFloat(string(s.st.data[s.sp.start:s.sp.end]), 64)
		if err == nil && !math.IsInf(f, 0) && math.Abs(f) <= maxNumber {
			s.q, s.inRange = quantize(f), true
		}
	}
	return s.q, s.inRange
}

// equals reports whether the leaf is the constant l.
func (s *scalar) equals(l *lit) bool {
	switch l.kind {
	case kindString:
		b, ok := s.str()
		return ok && string(b) == l.s
	case kindNumber:
		if s.sp.kind != vNumber {
			return false
		}
		if q, ok := s.number(); ok && l.inRange && q == l.q {
			return true
		}
		return string(s.st.data[s.sp.start:s.sp.end]) == l.s
	case kindTrue:
		return s.sp.kind == vTrue
	case kindFalse:
		return s.sp.kind == vFalse
	case kindNull:
		return s.sp.kind == vNull
	}
	return false
}

// match evaluates c on one leaf.
func (c *cond) match(s *scalar) bool {
	switch c.op {
	case opExact:
		return s.equals(&c.lits[0])
	case opAnythingBut:
		for i := range c.lits {
			if s.equals(&c.lits[i]) {
				return false
			}
		}
		return true
	case opNumeric:
		q, ok := s.number()
		return ok && inRanges(q, c.ranges)
	}
	b, isString := s.str()
	switch c.op {
	case opPrefix:
		return isString && hasPrefix(b, c.s, c.fold)
	case opSuffix:
		return isString && hasSuffix(b, c.s, c.fold)
	case opEqualsIgnoreCase:
		return isString && equalFold(b, c.s)
	case opAnythingButPrefix:
		return !isString || !hasPrefix(b, c.s, false)
	case opAnythingButSuffix:
		return !isString || !hasSuffix(b, c.s, false)
	case opAnythingButIgnoreCase:
		return !isString || !equalFold(b, c.s)
	}
	return false
}

// inRanges reports whether q satisfies every comparison.
func inRanges(q int64, bs []bound) bool {
	for _, b := range bs {
		var ok bool
		switch b.cmp {
		case "<":
			ok = q < b.q
		case "<=":
			ok = q <= b.q
		case "=":
			ok = q == b.q
		case ">":
			ok = q > b.q
		case ">=":
			ok = q >= b.q
		}
		if !ok {
			return false
		}
	}
	return true
}

// foldRune reports whether value rune v matches operand rune o ignoring
// case: v is o, or o's lower or upper case (EventBridge's rule: each
// character of the operand in either case).
func foldRune(v, o rune) bool {
	return v == o || v == unicode.ToLower(o) || v == unicode.ToUpper(o)
}

// hasPrefix reports whether b starts with p, ignoring case when fold.
func hasPrefix(b []byte, p string, fold bool) bool {
	if !fold {
		return len(b) >= len(p) && string(b[:len(p)]) == p
	}
	for _, o := range p {
		v, n := utf8.DecodeRune(b)
		if n == 0 || !foldRune(v, o) {
			return false
		}
		b = b[n:]
	}
	return true
}

// hasSuffix reports whether b ends with p, ignoring case when fold.
func hasSuffix(b []byte, p string, fold bool) bool {
	if !fold {
		return len(b) >= len(p) && string(b[len(b)-len(p):]) == p
	}
	for len(p) > 0 {
		o, m := utf8.DecodeLastRuneInString(p)
		v, n := utf8.DecodeLastRune(b)
		if n == 0 || !foldRune(v, o) {
			return false
		}
		p, b = p[:len(p)-m], b[:len(b)-n]
	}
	return true
}

// equalFold reports whether b is p, ignoring case.
func equalFold(b []byte, p string) bool {
	for _, o := range p {
		v, n := utf8.DecodeRune(b)
		if n == 0 || !foldRune(v, o) {
			return false
		}
		b = b[n:]
	}
	return len(b) == 0
}
