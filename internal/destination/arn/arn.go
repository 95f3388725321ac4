package arn

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/hookline/hookline/internal/domain"
)

// ARN is an Amazon Resource Name split into its parts:
// arn:Partition:Service:Region:Account:Resource.
type ARN struct{ Partition, Service, Region, Account, Resource string }

// String joins the parts back into the ARN.
func (a ARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}

// Name is the resource's own name: the queue's or topic's name, the bus's
// name after "event-bus/", the role's name after its path.
func (a ARN) Name() string {
	return a.Resource[strings.LastIndexByte(a.Resource, '/')+1:]
}

// The shapes AWS documents for each part.
var (
	partitionRE = lazyRE(`^aws(-[a-z]+)*$`)
	regionRE    = lazyRE(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	accountRE   = lazyRE(`^[0-9]{12}$`)
	// queueRE: 1 to 80 letters, digits, hyphens and underscores.
	queueRE = boundedRE(`^[A-Za-z0-9_-]+$`, 80)
	// topicRE: 1 to 256 letters, digits, hyphens and underscores.
	topicRE = boundedRE(`^[A-Za-z0-9_-]+$`, 256)
	// busRE: 1 to 256 letters, digits and . - _ / (a partner bus's name
	// has slashes: aws.partner/...).
	busRE = boundedRE(`^[A-Za-z0-9._/-]+$`, 256)
	// roleNameRE: 1 to 64 of [\w+=,.@-]; rolePathRE: "/" or /seg/.../,
	// each character ASCII ! to ~.
	roleNameRE = boundedRE(`^[\w+=,.@-]+$`, 64)
	rolePathRE = lazyRE(`^/([\x21-\x7e]*/)?$`)
)

// pattern is a regular expression compiled on its first use, not at
// package init: the api and deliver functions link this package, and
// compiling its eight patterns at init cost each of their cold starts
// 0.2 ms, for requests most of which check no ARN.
type pattern func() *regexp.Regexp

func lazyRE(expr string) pattern {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// MatchString reports whether s matches the pattern.
func (p pattern) MatchString(s string) bool { return p().MatchString(s) }

// bounded is a pattern of one character class repeated, and the most
// characters it may match: the bound is a length check, not a counted
// repetition ({1,256}), which the regexp package compiles into as many
// copies of the class, milliseconds at every cold start.
type bounded struct {
	re  pattern
	max int
}

func boundedRE(expr string, max int) bounded {
	return bounded{re: lazyRE(expr), max: max}
}

// MatchString reports whether s matches the pattern within the bound.
func (b bounded) MatchString(s string) bool { return len(s) <= b.max && b.re.MatchString(s) }

// ErrFIFO refuses a FIFO queue or topic (a name ending in ".fifo"): a FIFO
// destination needs a message group and deduplication that hookline's
// retries, out of order by design, cannot honour.
var ErrFIFO = errors.New("FIFO queues and topics (.fifo) are not supported: hookline retries out of order, use a standard queue or topic")

// targetShape is each type's service and the form its ARN takes, for errors.
var targetShape = map[domain.EndpointType][2]string{
	domain.TypeSQS:         {"sqs", "arn:aws:sqs:REGION:ACCOUNT:QUEUE_NAME"},
	domain.TypeSNS:         {"sns", "arn:aws:sns:REGION:ACCOUNT:TOPIC_NAME"},
	domain.TypeEventBridge: {"events", "arn:aws:events:REGION:ACCOUNT:event-bus/BUS_NAME"},
}

// ParseTarget parses an AWS destination's target, the ARN of the customer's
// queue (TypeSQS), topic (TypeSNS) or event bus (TypeEventBridge), and
// checks its shape: partition, service, region, 12-digit account and the
// resource's name rules. A FIFO queue or topic is refused (ErrFIFO).
func ParseTarget(t domain.EndpointType, s string) (ARN, error) {
	shape, ok := targetShape[t]
	if !ok {
		return ARN{}, fmt.Errorf("type %q has no ARN target (want sqs, sns or eventbridge)", t)
	}
	a, err := split(s, shape[1])
	if err != nil {
		return ARN{}, err
	}
	if a.Service != shape[0] {
		return ARN{}, fmt.Errorf("a %s target is an %s ARN, not %s (want %s)", t, shape[0], a.Service, shape[1])
	}
	if !regionRE.MatchString(a.Region) {
		return ARN{}, fmt.Errorf("region %q is not a region name like eu-west-1 (want %s)", a.Region, shape[1])
	}
	return a, checkResource(t, a.Resource, shape[1])
}

// checkResource holds a target's resource to its type's name rules.
func checkResource(t domain.EndpointType, res, shape string) error {
	switch t {
	case domain.TypeSQS, domain.TypeSNS:
		if strings.HasSuffix(res, ".fifo") {
			return ErrFIFO
		}
		if t == domain.TypeSQS && !queueRE.MatchString(res) {
			return fmt.Errorf("queue name %q must be 1 to 80 letters, digits, hyphens or underscores (want %s)", res, shape)
		}
		if t == domain.TypeSNS && !topicRE.MatchString(res) {
			return fmt.Errorf("topic name %q must be 1 to 256 letters, digits, hyphens or underscores (want %s)", res, shape)
		}
	case domain.TypeEventBridge:
		name, ok := strings.CutPrefix(res, "event-bus/")
		if !ok || !busRE.MatchString(name) {
			return fmt.Errorf("resource %q is not event-bus/NAME, NAME 1 to 256 of letters, digits and . - _ / (want %s)", res, shape)
		}
	}
	return nil
}

// ParseRole parses the ARN of the role hookline assumes in the customer's
// account: arn:PARTITION:iam::ACCOUNT:role/NAME or role/PATH/NAME, with
// IAM's rules for the path and the name (1 to 64 of [\w+=,.@-]).
func ParseRole(s string) (ARN, error) {
	const shape = "arn:aws:iam::ACCOUNT:role/NAME"
	a, err := split(s, shape)
	if err != nil {
		return ARN{}, err
	}
	switch {
	case a.Service != "iam":
		return ARN{}, fmt.Errorf("a role is an iam ARN, not %s (want %s)", a.Service, shape)
	case a.Region != "":
		return ARN{}, fmt.Errorf("a role ARN has no region, got %q (want %s)", a.Region, shape)
	case !strings.HasPrefix(a.Resource, "role/"):
		return ARN{}, fmt.Errorf("resource %q is not a role (want %s)", a.Resource, shape)
	}
	rest := a.Resource[len("role"):]
	i := strings.LastIndexByte(rest, '/')
	path, name := rest[:i+1], rest[i+1:]
	if !roleNameRE.MatchString(name) {
		return ARN{}, fmt.Errorf("role name %q must be 1 to 64 letters, digits or +=,.@_- (want %s)", name, shape)
	}
	if len(path) > 512 || !rolePathRE.MatchString(path) {
		return ARN{}, fmt.Errorf("role path %q must be / or /PATH/ of at most 512 printable ASCII characters", path)
	}
	return a, nil
}

// split cuts s into an ARN's six parts and checks the partition and the
// account, the parts every ARN here shares; shape is for the errors.
func split(s, shape string) (ARN, error) {
	if len(s) > 2048 {
		return ARN{}, fmt.Errorf("ARN of %d bytes is too long (at most 2048)", len(s))
	}
	p := strings.SplitN(s, ":", 6)
	if len(p) != 6 || p[0] != "arn" {
		return ARN{}, fmt.Errorf("%q is not an ARN (want %s)", s, shape)
	}
	a := ARN{Partition: p[1], Service: p[2], Region: p[3], Account: p[4], Resource: p[5]}
	if !partitionRE.MatchString(a.Partition) {
		return ARN{}, fmt.Errorf("partition %q is not an AWS partition like aws (want %s)", a.Partition, shape)
	}
	if !accountRE.MatchString(a.Account) {
		return ARN{}, fmt.Errorf("account %q is not a 12-digit AWS account id (want %s)", a.Account, shape)
	}
	return a, nil
}

// Like reports whether s matches pattern as IAM matches an ARN against a
// policy's Resource (ArnLike): the six colon-separated parts each on their
// own, * any run of characters (slashes too) and ? any one, case
// sensitive. A pattern of fewer parts than an ARN matches nothing.
func Like(pattern, s string) bool {
	pp, sp := strings.SplitN(pattern, ":", 6), strings.SplitN(s, ":", 6)
	if len(pp) != 6 || len(sp) != 6 {
		return false
	}
	for i := range pp {
		if !glob(pp[i], sp[i]) {
			return false
		}
	}
	return true
}

// glob matches s against p's * and ?, in time linear in their lengths but
// for the backtracking to the last star (at most len(p)*len(s)).
func glob(p, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
