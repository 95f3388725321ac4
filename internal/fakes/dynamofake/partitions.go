package dynamofake

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Billing and partition accounting. Every request's units are billed
// (DB.Billed, Table.Billed), by the rules below; the per-second limits
// are opt-in (a DB's or a Table's Limits field). Every
// partition key value of the table, and separately of each global index,
// sustains at most 1,000 write units and 3,000 read units a second, which
// adaptive capacity cannot raise. The fake counts the units each request
// consumes per key value in buckets of one second of its clock (Now), and
// refuses a request that would take a key value over its limit in its
// second, whole, as the SDK returns it after its retries: a
// ProvisionedThroughputExceededException, or for a transaction a
// TransactionCanceledException whose members on an exhausted key value
// say ThrottlingError. A refused request consumes nothing and changes
// nothing.
//
// Units, by DynamoDB's rules:
//   - a write: one unit per started KB of the item (the larger of before
//     and after), at least one, twice that in TransactWriteItems; a
//     ConditionCheck member counts as a transactional write of its item; a
//     single write whose condition fails still consumes its units on the
//     table (nothing reaches an index);
//   - a global index: a write of the table that puts, changes or removes an
//     item of the index writes the index too, one unit per started KB of
//     the index entry (its projection), on the entry's index key value; a
//     write that moves an item between index key values is two writes
//     (the removal from the old one, the put under the new one); index
//     writes are standard ones, in a transaction too;
//   - a read: one unit per started 4 KB of the item, strongly consistent,
//     half that eventually consistent, at least one (or a half) even for
//     an item that does not exist; BatchGetItem counts each item alone;
//   - a Query: the total size of the items it read (before its filter),
//     rounded up to 4 KB, halved when eventually consistent (an index
//     always is), at least one (or a half), per page; Scan is not counted
//     (it spreads over every partition).

// Limits are the per-partition-key-value throughput limits a fake enforces.
// A zero field is DynamoDB's limit.
type Limits struct {
	// WCU is the write units one key value takes a second (1,000).
	WCU float64
	// RCU is the read units one key value takes a second (3,000).
	RCU float64
}

// DynamoDBLimits are DynamoDB's per-partition-key-value limits: 1,000
// WCU and 3,000 RCU a second.
func DynamoDBLimits() *Limits { return &Limits{WCU: 1000, RCU: 3000} }

// Consumed is what one key value consumed: the most write and read units
// of any one second, and how many requests it refused.
type Consumed struct {
	// Index is the global index the key value is of, "" for the table.
	Index string
	// Key is the partition key value.
	Key string
	// WCU and RCU are the peak units of one second.
	WCU, RCU float64
	// Refused counts the requests refused for this key value.
	Refused int
}

// String is the key value and its peaks, for a test's log.
func (c Consumed) String() string {
	where := "table"
	if c.Index != "" {
		where = "index " + c.Index
	}
	return fmt.Sprintf("%s %q: %g WCU/s, %g RCU/s, %d refused", where, c.Key, c.WCU, c.RCU, c.Refused)
}

// part names a partition key value: of the table (index "") or an index.
type part struct{ index, key string }

// charge is the units one request asks of a key value.
type charge struct {
	part
	w, r float64
}

// meter keeps the per-second buckets, and the units billed since the
// start. Its owner's lock is held.
type meter struct {
	second int64
	cur    map[part]*Consumed
	peak   map[part]*Consumed
	billed map[string]Units
}

// Units are the write and read units billed to the table or to one of its
// indexes.
type Units struct {
	W, R float64
}

// bill adds charges, admitted, to the units billed.
func (m *meter) bill(charges []charge) {
	if m.billed == nil {
		m.billed = map[string]Units{}
	}
	for _, c := range charges {
		u := m.billed[c.index]
		u.W += c.w
		u.R += c.r
		m.billed[c.index] = u
	}
}

// billedCopy is a copy of the units billed, by index ("" the table).
func (m *meter) billedCopy() map[string]Units {
	out := make(map[string]Units, len(m.billed))
	for k, v := range m.billed {
		out[k] = v
	}
	return out
}

// writeUnits is one standard write of size bytes.
func writeUnits(size int) float64 { return math.Max(1, math.Ceil(float64(size)/1024)) }

// readUnits is one read of size bytes.
func readUnits(size int, strong bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !strong {
		u /= 2
	}
	return u
}

// take consumes the charges at now, all or none: a charge that would take
// its key value over limits in now's second refuses them all, and the key
// values over are returned.
func (m *meter) take(limits *Limits, now time.Time, charges []charge) []part {
	if limits == nil {
		m.bill(charges)
		return nil
	}
	if s := now.Unix(); s != m.second || m.cur == nil {
		m.second, m.cur = s, map[part]*Consumed{}
	}
	if m.peak == nil {
		m.peak = map[part]*Consumed{}
	}
	want := map[part]*Consumed{}
	var order []part
	for _, c := range charges {
		w := want[c.part]
		if w == nil {
			w = &Consumed{}
			want[c.part] = w
			order = append(order, c.part)
		}
		w.WCU += c.w
		w.RCU += c.r
	}
	wl, rl := limits.WCU, limits.RCU
	if wl == 0 {
		wl = 1000
	}
	if rl == 0 {
		rl = 3000
	}
	var over []part
	for _, p := range order {
		cur := m.bucket(m.cur, p)
		if cur.WCU+want[p].WCU > wl || cur.RCU+want[p].RCU > rl {
			over = append(over, p)
		}
	}
	if len(over) > 0 {
		for _, p := range over {
			m.bucket(m.peak, p).Refused++
		}
		return over
	}
	for _, p := range order {
		cur, pk := m.bucket(m.cur, p), m.bucket(m.peak, p)
		cur.WCU += want[p].WCU
		cur.RCU += want[p].RCU
		pk.WCU, pk.RCU = max(pk.WCU, cur.WCU), max(pk.RCU, cur.RCU)
	}
	m.bill(charges)
	return nil
}

func (m *meter) bucket(in map[part]*Consumed, p part) *Consumed {
	c := in[p]
	if c == nil {
		c = &Consumed{Index: p.index, Key: p.key}
		in[p] = c
	}
	return c
}

// hottest lists every key value that consumed or refused anything, the one
// nearest its limits first (the larger of its write and read peaks as a
// share of its limit), then by index and key.
func (m *meter) hottest(limits *Limits) []Consumed {
	l := Limits{WCU: 1000, RCU: 3000}
	if limits != nil && limits.WCU > 0 {
		l.WCU = limits.WCU
	}
	if limits != nil && limits.RCU > 0 {
		l.RCU = limits.RCU
	}
	heat := func(c Consumed) float64 { return max(c.WCU/l.WCU, c.RCU/l.RCU) }
	out := make([]Consumed, 0, len(m.peak))
	for _, c := range m.peak {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if heat(a) != heat(b) {
			return heat(a) > heat(b)
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Key < b.Key
	})
	return out
}

// throttled is the error of a single request refused for the key values
// over.
func throttled(over []part) error {
	return &types.ProvisionedThroughputExceededException{Message: aws.String(overMessage(over))}
}

func overMessage(over []part) string {
	msg := "The level of configured provisioned throughput for the table was exceeded:"
	for _, p := range over {
		if p.index == "" {
			msg += fmt.Sprintf(" partition key value %q", p.key)
		} else {
			msg += fmt.Sprintf(" index %s partition key value %q", p.index, p.key)
		}
	}
	return msg
}

// clock is now by the owner's Now, or time.Now.
func clock(now func() time.Time) time.Time {
	if now == nil {
		return time.Now()
	}
	return now()
}

// Throttled reports whether err is a refusal for throughput: a
// ProvisionedThroughputExceededException, or a transaction cancelled with a
// member's ThrottlingError.
func Throttled(err error) bool {
	var pt *types.ProvisionedThroughputExceededException
	if errors.As(err, &pt) {
		return true
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ThrottlingError" {
				return true
			}
		}
	}
	return false
}

// keyValue is the value a key condition (or any expression of ANDed
// comparisons) sets attr equal to: "attr = :v" or "#n = :v" with #n naming
// attr; "" when it has none.
func keyValue(expr *string, names map[string]string, values map[string]av, attr string) string {
	fields := strings.Fields(strings.NewReplacer("(", " ", ")", " ").Replace(aws.ToString(expr)))
	for i := 0; i+2 < len(fields); i++ {
		name := fields[i]
		if n, ok := names[name]; ok {
			name = n
		}
		if name == attr && fields[i+1] == "=" {
			return String(values, fields[i+2])
		}
	}
	return ""
}
