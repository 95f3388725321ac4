package cost

import (
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemSize estimates the size DynamoDB bills an item at, by the rules of
// "DynamoDB item sizes and formats"
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
// each attribute costs its name's UTF-8 bytes plus its value; a string its
// UTF-8 bytes, a binary its raw bytes, a number one byte per two significant
// digits plus one, a Boolean or null one byte, a list or map 3 bytes plus
// its elements, each element one byte more. Sets are counted as the sum of
// their members (the page gives no rule for them). The 100 bytes of
// per-item storage overhead are not included: they count for storage, not
// for request units.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	}
	return 0
}

// numberSize is one byte per two significant digits, plus one: leading and
// trailing zeros, the sign, the decimal point and an exponent do not count.
func numberSize(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "+-")
	s = strings.Replace(s, ".", "", 1)
	s = strings.Trim(s, "0")
	if s == "" {
		return 1 // zero
	}
	return (len(s)+1)/2 + 1
}

// WriteUnits is the write request units one standard write of an item of
// size bytes consumes: one per started KB (1,024 bytes), at least one. For
// an update, size is the larger of the item before and after it. A
// transactional write costs twice this.
func WriteUnits(size int) float64 {
	return math.Max(1, math.Ceil(float64(size)/1024))
}

// ReadUnits is the read request units one read of an item of size bytes
// consumes: one per started 4 KB when strongly consistent, half that when
// eventually consistent, at least one half.
func ReadUnits(size int, strong bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !strong {
		u /= 2
	}
	return u
}
