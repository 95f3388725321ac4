package filter

import (
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// slotsOnStack is how many keys of one level Match gathers without
// allocating.
const slotsOnStack = 16

// Match reports whether the JSON document data (an event's data) matches
// the filter. It reads only the values the filter names. A nil filter
// matches everything.
func (f *Filter) Match(data []byte) bool {
	if f == nil {
		return true
	}
	sp := value(data, 0)
	if sp.kind != vObject {
		sp = span{}
	}
	return f.root.match(data, sp)
}

// match evaluates lv on the object sp (the zero span: an object with no
// field).
func (lv *level) match(data []byte, sp span) bool {
	var buf [slotsOnStack]span
	var slots []span
	if len(lv.keys) <= slotsOnStack {
		slots = buf[:len(lv.keys)]
	} else {
		slots = make([]span, len(lv.keys))
	}
	if sp.kind == vObject {
		members(data, sp, func(key, val span) bool {
			k := text(data, key)
			for i, want := range lv.keys {
				if string(k) == want {
					slots[i] = val // a repeated key: the last one counts, as in encoding/json
					break
				}
			}
			return true
		})
	}
	return lv.root.match(data, slots)
}

// match evaluates n on one object's gathered values.
func (n *node) match(data []byte, slots []span) bool {
	for i := range n.fields {
		f := &n.fields[i]
		sp := slots[f.slot]
		if f.sub != nil {
			if !f.sub.matchValue(data, sp) {
				return false
			}
		} else if !matchLeaf(data, f.conds, sp) {
			return false
		}
	}
	for _, group := range n.ors {
		ok := false
		for _, b := range group {
			if b.match(data, slots) {
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

// matchValue evaluates a nested pattern on a field's value: on the object,
// on any object element of an array (arrays within arrays too), and
// otherwise (absent, a scalar, no object in the array) on an object with
// no field, as EventBridge does.
func (lv *level) matchValue(data []byte, sp span) bool {
	switch sp.kind {
	case vObject:
		return lv.match(data, sp)
	case vArray:
		found, matched := false, false
		eachNested(data, sp, vObject, 0, func(obj span) bool {
			found = true
			matched = lv.match(data, obj)
			return !matched
		})
		if found {
			return matched
		}
	}
	return lv.match(data, span{})
}

// eachNested calls fn with each value of kind want (vObject), or each
// scalar (vNone), in sp, looking into arrays within arrays, until fn
// answers false; it answers false then.
func eachNested(data []byte, sp span, want vkind, depth int, fn func(span) bool) bool {
	switch {
	case sp.kind == vArray:
		if depth >= maxDataDepth {
			return true
		}
		return elements(data, sp, func(el span) bool { return eachNested(data, el, want, depth+1, fn) })
	case sp.kind == vObject:
		if want == vObject {
			return fn(sp)
		}
		return true
	case want == vObject || sp.kind == vNone:
		return true
	}
	return fn(sp)
}

// matchLeaf evaluates a field's conditions on its value sp: exists on
// whether it reaches a leaf, the others on any of its leaves.
func matchLeaf(data []byte, conds []cond, sp span) bool {
	hasLeaf, others := false, false
	if sp.kind != vNone {
		eachNested(data, sp, vNone, 0, func(span) bool { hasLeaf = true; return false })
	}
	for i := range conds {
		if conds[i].op != opExists {
			others = true
		} else if conds[i].exists == hasLeaf {
			return true
		}
	}
	if !others || !hasLeaf {
		return false
	}
	matched := false
	eachNested(data, sp, vNone, 0, func(leaf span) bool {
		sc := scalar{data: data, sp: leaf}
		for i := range conds {
			if conds[i].op != opExists && conds[i].match(&sc) {
				matched = true
				return false
			}
		}
		return true
	})
	return matched
}

// scalar is one leaf being matched, with its number parsed once.
type scalar struct {
	data    []byte
	sp      span
	parsed  bool
	q       int64
	inRange bool
}

// str is the leaf's string content, and whether it is a string.
func (s *scalar) str() ([]byte, bool) {
	if s.sp.kind != vString {
		return nil, false
	}
	return text(s.data, s.sp), true
}

// number is the leaf's quantized value, if it is a number within ±5e9.
func (s *scalar) number() (int64, bool) {
	if s.sp.kind != vNumber {
		return 0, false
	}
	if !s.parsed {
		s.parsed = true
		f, err := strconv.ParseFloat(string(s.data[s.sp.start:s.sp.end]), 64)
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
		return string(s.data[s.sp.start:s.sp.end]) == l.s
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
