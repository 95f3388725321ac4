package dynamofake

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A small DynamoDB expression engine for DB: condition, key condition,
// filter and update expressions, evaluated as DynamoDB evaluates them, with
// the rules AWS enforces and the local cloud may forgive (a value or name
// given and not used, an empty value map, two actions on overlapping
// paths, an update of a key attribute). Unsupported syntax is an error,
// never a silent pass.

type av = types.AttributeValue

// errValidation is what DynamoDB answers a malformed request with.
func errValidation(format string, args ...any) error {
	return fmt.Errorf("ValidationException: "+format, args...)
}

// exprEnv holds a request's placeholders and records which were used.
type exprEnv struct {
	names      map[string]string
	values     map[string]av
	usedNames  map[string]bool
	usedValues map[string]bool
}

func newExprEnv(names map[string]string, values map[string]av) (*exprEnv, error) {
	if values != nil && len(values) == 0 {
		return nil, errValidation("ExpressionAttributeValues must not be empty")
	}
	if names != nil && len(names) == 0 {
		return nil, errValidation("ExpressionAttributeNames must not be empty")
	}
	return &exprEnv{names: names, values: values, usedNames: map[string]bool{}, usedValues: map[string]bool{}}, nil
}

// checkUnused fails, as DynamoDB does, on a placeholder no expression used.
func (e *exprEnv) checkUnused() error {
	for n := range e.names {
		if !e.usedNames[n] {
			return errValidation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", n)
		}
	}
	for v := range e.values {
		if !e.usedValues[v] {
			return errValidation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", v)
		}
	}
	return nil
}

// --- lexer ---

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokName  // #name
	tokValue // :value
	tokNumber
	tokPunct
)

type token struct {
	kind tokKind
	text string
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == ':' || isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			kind := tokIdent
			if c == '#' {
				kind = tokName
			} else if c == ':' {
				kind = tokValue
			}
			if (kind != tokIdent) && j == i+1 {
				return nil, errValidation("invalid token at %d in %q", i, s)
			}
			out = append(out, token{kind, s[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			out = append(out, token{tokNumber, s[i:j]})
			i = j
		case strings.HasPrefix(s[i:], "<>") || strings.HasPrefix(s[i:], "<=") || strings.HasPrefix(s[i:], ">="):
			out = append(out, token{tokPunct, s[i : i+2]})
			i += 2
		case strings.ContainsRune("=<>(),.[]+-", rune(c)):
			out = append(out, token{tokPunct, string(c)})
			i++
		default:
			return nil, errValidation("invalid character %q in %q", c, s)
		}
	}
	return append(out, token{kind: tokEOF}), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

type parser struct {
	toks []token
	pos  int
	env  *exprEnv
	src  string
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) keyword(k string) bool {
	t := p.peek()
	return t.kind == tokIdent && strings.EqualFold(t.text, k)
}

func (p *parser) punct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == s
}

func (p *parser) expect(s string) error {
	if !p.punct(s) {
		return errValidation("syntax error in %q: %q expected at token %d", p.src, s, p.pos)
	}
	p.pos++
	return nil
}

// --- paths and values ---

type pathElem struct {
	name  string
	index int
	isIdx bool
}

type docPath []pathElem

func (d docPath) String() string {
	var b strings.Builder
	for i, e := range d {
		switch {
		case e.isIdx:
			fmt.Fprintf(&b, "[%d]", e.index)
		case i > 0:
			b.WriteString("." + e.name)
		default:
			b.WriteString(e.name)
		}
	}
	return b.String()
}

// overlaps reports whether one path is the other or inside it.
func (d docPath) overlaps(o docPath) bool {
	n := min(len(d), len(o))
	for i := 0; i < n; i++ {
		if d[i] != o[i] {
			return false
		}
	}
	return true
}

var reservedFuncs = map[string]bool{
	"attribute_exists": true, "attribute_not_exists": true, "attribute_type": true, "begins_with": true,
	"contains": true, "size": true, "if_not_exists": true, "list_append": true,
}

func (p *parser) name(t token) (string, error) {
	switch t.kind {
	case tokName:
		n, ok := p.env.names[t.text]
		if !ok {
			return "", errValidation("An expression attribute name used in the document path is not defined; attribute name: %s", t.text)
		}
		p.env.usedNames[t.text] = true
		return n, nil
	case tokIdent:
		if reserved[strings.ToUpper(t.text)] {
			return "", errValidation("Attribute name is a reserved keyword; reserved keyword: %s", t.text)
		}
		return t.text, nil
	}
	return "", errValidation("syntax error in %q: attribute name expected, got %q", p.src, t.text)
}

// reserved holds DynamoDB's reserved words (the developer guide's list,
// 573 of them): a bare use of one in an expression is refused, as DynamoDB
// refuses it; it must go through an #name placeholder.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(reservedWords) {
		m[w] = true
	}
	return m
}()

const reservedWords = `
ABORT ABSOLUTE ACTION ADD AFTER AGENT AGGREGATE ALL ALLOCATE ALTER ANALYZE AND ANY ARCHIVE ARE ARRAY
AS ASC ASCII ASENSITIVE ASSERTION ASYMMETRIC AT ATOMIC ATTACH ATTRIBUTE AUTH AUTHORIZATION AUTHORIZE
AUTO AVG BACK BACKUP BASE BATCH BEFORE BEGIN BETWEEN BIGINT BINARY BIT BLOB BLOCK BOOLEAN BOTH
BREADTH BUCKET BULK BY BYTE CALL CALLED CALLING CAPACITY CASCADE CASCADED CASE CAST CATALOG CHAR
CHARACTER CHECK CLASS CLOB CLOSE CLUSTER CLUSTERED CLUSTERING CLUSTERS COALESCE COLLATE COLLATION
COLLECTION COLUMN COLUMNS COMBINE COMMENT COMMIT COMPACT COMPILE COMPRESS CONDITION CONFLICT CONNECT
CONNECTION CONSISTENCY CONSISTENT CONSTRAINT CONSTRAINTS CONSTRUCTOR CONSUMED CONTINUE CONVERT COPY
CORRESPONDING COUNT COUNTER CREATE CROSS CUBE CURRENT CURSOR CYCLE DATA DATABASE DATE DATETIME DAY
DEALLOCATE DEC DECIMAL DECLARE DEFAULT DEFERRABLE DEFERRED DEFINE DEFINED DEFINITION DELETE
DELIMITED DEPTH DEREF DESC DESCRIBE DESCRIPTOR DETACH DETERMINISTIC DIAGNOSTICS DIRECTORIES DISABLE
DISCONNECT DISTINCT DISTRIBUTE DO DOMAIN DOUBLE DROP DUMP DURATION DYNAMIC EACH ELEMENT ELSE ELSEIF
EMPTY ENABLE END EQUAL EQUALS ERROR ESCAPE ESCAPED EVAL EVALUATE EXCEEDED EXCEPT EXCEPTION
EXCEPTIONS EXCLUSIVE EXEC EXECUTE EXISTS EXIT EXPLAIN EXPLODE EXPORT EXPRESSION EXTENDED EXTERNAL
EXTRACT FAIL FALSE FAMILY FETCH FIELDS FILE FILTER FILTERING FINAL FINISH FIRST FIXED FLATTERN FLOAT
FOR FORCE FOREIGN FORMAT FORWARD FOUND FREE FROM FULL FUNCTION FUNCTIONS GENERAL GENERATE GET GLOB
GLOBAL GO GOTO GRANT GREATER GROUP GROUPING HANDLER HASH HAVE HAVING HEAP HIDDEN HOLD HOUR
IDENTIFIED IDENTITY IF IGNORE IMMEDIATE IMPORT IN INCLUDING INCLUSIVE INCREMENT INCREMENTAL INDEX
INDEXED INDEXES INDICATOR INFINITE INITIALLY INLINE INNER INNTER INOUT INPUT INSENSITIVE INSERT
INSTEAD INT INTEGER INTERSECT INTERVAL INTO INVALIDATE IS ISOLATION ITEM ITEMS ITERATE JOIN KEY KEYS
LAG LANGUAGE LARGE LAST LATERAL LEAD LEADING LEAVE LEFT LENGTH LESS LEVEL LIKE LIMIT LIMITED LINES
LIST LOAD LOCAL LOCALTIME LOCALTIMESTAMP LOCATION LOCATOR LOCK LOCKS LOG LOGED LONG LOOP LOWER MAP
MATCH MATERIALIZED MAX MAXLEN MEMBER MERGE METHOD METRICS MIN MINUS MINUTE MISSING MOD MODE MODIFIES
MODIFY MODULE MONTH MULTI MULTISET NAME NAMES NATIONAL NATURAL NCHAR NCLOB NEW NEXT NO NONE NOT NULL
NULLIF NUMBER NUMERIC OBJECT OF OFFLINE OFFSET OLD ON ONLINE ONLY OPAQUE OPEN OPERATOR OPTION OR
ORDER ORDINALITY OTHER OTHERS OUT OUTER OUTPUT OVER OVERLAPS OVERRIDE OWNER PAD PARALLEL PARAMETER
PARAMETERS PARTIAL PARTITION PARTITIONED PARTITIONS PATH PERCENT PERCENTILE PERMISSION PERMISSIONS
PIPE PIPELINED PLAN POOL POSITION PRECISION PREPARE PRESERVE PRIMARY PRIOR PRIVATE PRIVILEGES
PROCEDURE PROCESSED PROJECT PROJECTION PROPERTY PROVISIONING PUBLIC PUT QUERY QUIT QUORUM RAISE
RANDOM RANGE RANK RAW READ READS REAL REBUILD RECORD RECURSIVE REDUCE REF REFERENCE REFERENCES
REFERENCING REGEXP REGION REINDEX RELATIVE RELEASE REMAINDER RENAME REPEAT REPLACE REQUEST RESET
RESIGNAL RESOURCE RESPONSE RESTORE RESTRICT RESULT RETURN RETURNING RETURNS REVERSE REVOKE RIGHT
ROLE ROLES ROLLBACK ROLLUP ROUTINE ROW ROWS RULE RULES SAMPLE SATISFIES SAVE SAVEPOINT SCAN SCHEMA
SCOPE SCROLL SEARCH SECOND SECTION SEGMENT SEGMENTS SELECT SELF SEMI SENSITIVE SEPARATE SEQUENCE
SERIALIZABLE SESSION SET SETS SHARD SHARE SHARED SHORT SHOW SIGNAL SIMILAR SIZE SKEWED SMALLINT
SNAPSHOT SOME SOURCE SPACE SPACES SPARSE SPECIFIC SPECIFICTYPE SPLIT SQL SQLCODE SQLERROR
SQLEXCEPTION SQLSTATE SQLWARNING START STATE STATIC STATUS STORAGE STORE STORED STREAM STRING STRUCT
STYLE SUB SUBMULTISET SUBPARTITION SUBSTRING SUBTYPE SUM SUPER SYMMETRIC SYNONYM SYSTEM TABLE
TABLESAMPLE TEMP TEMPORARY TERMINATED TEXT THAN THEN THROUGHPUT TIME TIMESTAMP TIMEZONE TINYINT TO
TOKEN TOTAL TOUCH TRAILING TRANSACTION TRANSFORM TRANSLATE TRANSLATION TREAT TRIGGER TRIM TRUE
TRUNCATE TTL TUPLE TYPE UNDER UNDO UNION UNIQUE UNIT UNKNOWN UNLOGGED UNNEST UNPROCESSED UNSIGNED
UNTIL UPDATE UPPER URL USAGE USE USER USERS USING UUID VACUUM VALUE VALUED VALUES VARCHAR VARIABLE
VARIANCE VARINT VARYING VIEW VIEWS VIRTUAL VOID WAIT WHEN WHENEVER WHERE WHILE WINDOW WITH WITHIN
WITHOUT WORK WRAPPED WRITE YEAR ZONE
`

func (p *parser) path() (docPath, error) {
	t := p.next()
	n, err := p.name(t)
	if err != nil {
		return nil, err
	}
	out := docPath{{name: n}}
	for {
		switch {
		case p.punct("."):
			p.pos++
			n, err := p.name(p.next())
			if err != nil {
				return nil, err
			}
			out = append(out, pathElem{name: n})
		case p.punct("["):
			p.pos++
			t := p.next()
			if t.kind != tokNumber {
				return nil, errValidation("list index expected in %q", p.src)
			}
			i, _ := strconv.Atoi(t.text)
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			out = append(out, pathElem{index: i, isIdx: true})
		default:
			return out, nil
		}
	}
}

func (p *parser) value(t token) (av, error) {
	v, ok := p.env.values[t.text]
	if !ok {
		return nil, errValidation("An expression attribute value used in expression is not defined; attribute value: %s", t.text)
	}
	p.env.usedValues[t.text] = true
	return v, nil
}

func getPath(item map[string]av, path docPath) av {
	var cur av = &types.AttributeValueMemberM{Value: item}
	for _, e := range path {
		switch v := cur.(type) {
		case *types.AttributeValueMemberM:
			if e.isIdx {
				return nil
			}
			next, ok := v.Value[e.name]
			if !ok {
				return nil
			}
			cur = next
		case *types.AttributeValueMemberL:
			if !e.isIdx || e.index >= len(v.Value) {
				return nil
			}
			cur = v.Value[e.index]
		default:
			return nil
		}
	}
	return cur
}

// --- conditions ---

type valFn func(item map[string]av) (av, error)
type condFn func(item map[string]av) (bool, error)

// parseCondition compiles a condition (or key condition, or filter).
func parseCondition(src string, env *exprEnv) (condFn, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, env: env, src: src}
	c, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, errValidation("syntax error in %q: unexpected %q", src, p.peek().text)
	}
	return c, nil
}

func (p *parser) or() (condFn, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		p.pos++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(it map[string]av) (bool, error) {
			x, err := a(it)
			if err != nil || x {
				return x, err
			}
			return b(it)
		}
	}
	return l, nil
}

func (p *parser) and() (condFn, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		p.pos++
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(it map[string]av) (bool, error) {
			x, err := a(it)
			if err != nil || !x {
				return x, err
			}
			return b(it)
		}
	}
	return l, nil
}

func (p *parser) not() (condFn, error) {
	if p.keyword("NOT") {
		p.pos++
		c, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(it map[string]av) (bool, error) { x, err := c(it); return !x, err }, nil
	}
	return p.primary()
}

func (p *parser) primary() (condFn, error) {
	if p.punct("(") {
		p.pos++
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		return c, p.expect(")")
	}
	t := p.peek()
	if t.kind == tokIdent && p.toks[p.pos+1].kind == tokPunct && p.toks[p.pos+1].text == "(" {
		switch fn := strings.ToLower(t.text); fn {
		case "attribute_exists", "attribute_not_exists":
			p.pos += 2
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			want := fn == "attribute_exists"
			return func(it map[string]av) (bool, error) { return (getPath(it, path) != nil) == want, nil }, nil
		case "begins_with", "contains", "attribute_type":
			p.pos += 2
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
			arg, err := p.operand()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return func(it map[string]av) (bool, error) {
				v, err := arg(it)
				if err != nil {
					return false, err
				}
				return boolFunc(fn, getPath(it, path), v), nil
			}, nil
		}
	}
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch {
	case p.keyword("BETWEEN"):
		p.pos++
		lo, err := p.operand()
		if err != nil {
			return nil, err
		}
		if !p.keyword("AND") {
			return nil, errValidation("syntax error in %q: BETWEEN without AND", p.src)
		}
		p.pos++
		hi, err := p.operand()
		if err != nil {
			return nil, err
		}
		// DynamoDB refuses a BETWEEN of two values whose upper bound is
		// below its lower one, before it reads anything.
		if a, err := lo(nil); err == nil && a != nil {
			if b, err := hi(nil); err == nil && b != nil && compare(a, ">", b) {
				return nil, errValidation("Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound")
			}
		}
		return func(it map[string]av) (bool, error) {
			x, err1 := l(it)
			a, err2 := lo(it)
			b, err3 := hi(it)
			if err := firstErr(err1, err2, err3); err != nil {
				return false, err
			}
			return compare(x, ">=", a) && compare(x, "<=", b), nil
		}, nil
	case p.keyword("IN"):
		p.pos++
		if err := p.expect("("); err != nil {
			return nil, err
		}
		var opts []valFn
		for {
			o, err := p.operand()
			if err != nil {
				return nil, err
			}
			opts = append(opts, o)
			if !p.punct(",") {
				break
			}
			p.pos++
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return func(it map[string]av) (bool, error) {
			x, err := l(it)
			if err != nil {
				return false, err
			}
			for _, o := range opts {
				v, err := o(it)
				if err != nil {
					return false, err
				}
				if compare(x, "=", v) {
					return true, nil
				}
			}
			return false, nil
		}, nil
	}
	op := p.next()
	if op.kind != tokPunct || !slices.Contains([]string{"=", "<>", "<", "<=", ">", ">="}, op.text) {
		return nil, errValidation("syntax error in %q: comparator expected, got %q", p.src, op.text)
	}
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	return func(it map[string]av) (bool, error) {
		a, err1 := l(it)
		b, err2 := r(it)
		if err := firstErr(err1, err2); err != nil {
			return false, err
		}
		return compare(a, op.text, b), nil
	}, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// operand: a path, a value, or size(path).
func (p *parser) operand() (valFn, error) {
	t := p.peek()
	switch {
	case t.kind == tokValue:
		p.pos++
		v, err := p.value(t)
		if err != nil {
			return nil, err
		}
		return func(map[string]av) (av, error) { return v, nil }, nil
	case t.kind == tokIdent && strings.EqualFold(t.text, "size") && p.toks[p.pos+1].text == "(":
		p.pos += 2
		path, err := p.path()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return func(it map[string]av) (av, error) {
			n, ok := sizeOf(getPath(it, path))
			if !ok {
				return nil, nil
			}
			return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}, nil
		}, nil
	case t.kind == tokIdent && reservedFuncs[strings.ToLower(t.text)]:
		return nil, errValidation("function %s not allowed here in %q", t.text, p.src)
	}
	path, err := p.path()
	if err != nil {
		return nil, err
	}
	return func(it map[string]av) (av, error) { return getPath(it, path), nil }, nil
}

func sizeOf(v av) (int, bool) {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value), true
	case *types.AttributeValueMemberB:
		return len(x.Value), true
	case *types.AttributeValueMemberL:
		return len(x.Value), true
	case *types.AttributeValueMemberM:
		return len(x.Value), true
	case *types.AttributeValueMemberSS:
		return len(x.Value), true
	case *types.AttributeValueMemberNS:
		return len(x.Value), true
	case *types.AttributeValueMemberBS:
		return len(x.Value), true
	}
	return 0, false
}

func typeName(v av) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberSS:
		return "SS"
	case *types.AttributeValueMemberNS:
		return "NS"
	case *types.AttributeValueMemberBS:
		return "BS"
	}
	return ""
}

func boolFunc(fn string, v, arg av) bool {
	switch fn {
	case "begins_with":
		switch x := v.(type) {
		case *types.AttributeValueMemberS:
			a, ok := arg.(*types.AttributeValueMemberS)
			return ok && strings.HasPrefix(x.Value, a.Value)
		case *types.AttributeValueMemberB:
			a, ok := arg.(*types.AttributeValueMemberB)
			return ok && bytes.HasPrefix(x.Value, a.Value)
		}
		return false
	case "contains":
		switch x := v.(type) {
		case *types.AttributeValueMemberS:
			a, ok := arg.(*types.AttributeValueMemberS)
			return ok && strings.Contains(x.Value, a.Value)
		case *types.AttributeValueMemberSS:
			a, ok := arg.(*types.AttributeValueMemberS)
			return ok && slices.Contains(x.Value, a.Value)
		case *types.AttributeValueMemberL:
			for _, e := range x.Value {
				if compare(e, "=", arg) {
					return true
				}
			}
		}
		return false
	case "attribute_type":
		a, ok := arg.(*types.AttributeValueMemberS)
		return v != nil && ok && typeName(v) == a.Value
	}
	return false
}

func ratOf(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat)
	}
	return r
}

// compare evaluates a comparison as DynamoDB does: values of different
// types (or a missing attribute) are only unequal.
func compare(a av, op string, b av) bool {
	if a == nil || b == nil || typeName(a) != typeName(b) {
		return op == "<>"
	}
	c := 0
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		c = strings.Compare(x.Value, b.(*types.AttributeValueMemberS).Value)
	case *types.AttributeValueMemberN:
		c = ratOf(x.Value).Cmp(ratOf(b.(*types.AttributeValueMemberN).Value))
	case *types.AttributeValueMemberB:
		c = bytes.Compare(x.Value, b.(*types.AttributeValueMemberB).Value)
	default:
		eq := fmt.Sprint(normalize(a)) == fmt.Sprint(normalize(b))
		switch op {
		case "=":
			return eq
		case "<>":
			return !eq
		}
		return false
	}
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}

// normalize turns a value into plain Go values for equality of documents.
func normalize(v av) any {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + x.Value
	case *types.AttributeValueMemberN:
		return "N:" + ratOf(x.Value).RatString()
	case *types.AttributeValueMemberB:
		return "B:" + string(x.Value)
	case *types.AttributeValueMemberBOOL:
		return x.Value
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberL:
		out := make([]any, len(x.Value))
		for i, e := range x.Value {
			out[i] = normalize(e)
		}
		return out
	case *types.AttributeValueMemberM:
		out := map[string]any{}
		for k, e := range x.Value {
			out[k] = normalize(e)
		}
		return out
	case *types.AttributeValueMemberSS:
		s := slices.Sorted(slices.Values(x.Value))
		return s
	case *types.AttributeValueMemberNS:
		s := make([]string, len(x.Value))
		for i, n := range x.Value {
			s[i] = ratOf(n).RatString()
		}
		sort.Strings(s)
		return s
	}
	return nil
}

// --- updates ---

type setAction struct {
	path docPath
	val  valFn
}

type addAction struct {
	path docPath
	val  av
}

type update struct {
	sets    []setAction
	removes []docPath
	adds    []addAction
	deletes []addAction
}

// parseUpdate compiles an update expression.
func parseUpdate(src string, env *exprEnv) (*update, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, env: env, src: src}
	u := &update{}
	seen := map[string]bool{}
	var targets []docPath
	for p.peek().kind != tokEOF {
		t := p.next()
		clause := strings.ToUpper(t.text)
		if t.kind != tokIdent || seen[clause] {
			return nil, errValidation("syntax error in %q at %q", src, t.text)
		}
		seen[clause] = true
		for {
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			targets = append(targets, path)
			switch clause {
			case "SET":
				if err := p.expect("="); err != nil {
					return nil, err
				}
				v, err := p.setValue()
				if err != nil {
					return nil, err
				}
				u.sets = append(u.sets, setAction{path, v})
			case "REMOVE":
				u.removes = append(u.removes, path)
			case "ADD", "DELETE":
				vt := p.next()
				if vt.kind != tokValue {
					return nil, errValidation("%s needs a value in %q", clause, src)
				}
				v, err := p.value(vt)
				if err != nil {
					return nil, err
				}
				if clause == "ADD" {
					u.adds = append(u.adds, addAction{path, v})
				} else {
					u.deletes = append(u.deletes, addAction{path, v})
				}
			default:
				return nil, errValidation("syntax error in %q: unknown clause %q", src, t.text)
			}
			if !p.punct(",") {
				break
			}
			p.pos++
		}
	}
	for i := range targets {
		if targets[i][0].name == "pk" || targets[i][0].name == "sk" {
			return nil, errValidation("Cannot update attribute %s. This attribute is part of the key", targets[i][0].name)
		}
		for j := i + 1; j < len(targets); j++ {
			if targets[i].overlaps(targets[j]) {
				return nil, errValidation("Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [%s], path two: [%s]", targets[i], targets[j])
			}
		}
	}
	return u, nil
}

func (p *parser) setValue() (valFn, error) {
	l, err := p.setOperand()
	if err != nil {
		return nil, err
	}
	if p.punct("+") || p.punct("-") {
		op := p.next().text
		r, err := p.setOperand()
		if err != nil {
			return nil, err
		}
		return func(it map[string]av) (av, error) {
			a, err1 := l(it)
			b, err2 := r(it)
			if err := firstErr(err1, err2); err != nil {
				return nil, err
			}
			x, ok1 := a.(*types.AttributeValueMemberN)
			y, ok2 := b.(*types.AttributeValueMemberN)
			if !ok1 || !ok2 {
				return nil, errValidation("An operand in the update expression has an incorrect data type")
			}
			s := new(big.Rat)
			if op == "+" {
				s.Add(ratOf(x.Value), ratOf(y.Value))
			} else {
				s.Sub(ratOf(x.Value), ratOf(y.Value))
			}
			return &types.AttributeValueMemberN{Value: formatRat(s)}, nil
		}, nil
	}
	return l, nil
}

func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(38), "0"), ".")
}

func (p *parser) setOperand() (valFn, error) {
	t := p.peek()
	if t.kind == tokIdent && p.toks[p.pos+1].text == "(" {
		switch strings.ToLower(t.text) {
		case "if_not_exists":
			p.pos += 2
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
			dflt, err := p.setValue()
			if err != nil {
				return nil, err
			}
			return func(it map[string]av) (av, error) {
				if v := getPath(it, path); v != nil {
					return v, nil
				}
				return dflt(it)
			}, p.expect(")")
		case "list_append":
			p.pos += 2
			a, err := p.setValue()
			if err != nil {
				return nil, err
			}
			if err := p.expect(","); err != nil {
				return nil, err
			}
			b, err := p.setValue()
			if err != nil {
				return nil, err
			}
			return func(it map[string]av) (av, error) {
				x, err1 := a(it)
				y, err2 := b(it)
				if err := firstErr(err1, err2); err != nil {
					return nil, err
				}
				l1, ok1 := x.(*types.AttributeValueMemberL)
				l2, ok2 := y.(*types.AttributeValueMemberL)
				if !ok1 || !ok2 {
					return nil, errValidation("An operand in the update expression has an incorrect data type")
				}
				return &types.AttributeValueMemberL{Value: append(slices.Clone(l1.Value), l2.Value...)}, nil
			}, p.expect(")")
		}
	}
	v, err := p.operand()
	if err != nil {
		return nil, err
	}
	return func(it map[string]av) (av, error) {
		x, err := v(it)
		if err == nil && x == nil {
			return nil, errValidation("The provided expression refers to an attribute that does not exist in the item")
		}
		return x, err
	}, nil
}

// apply returns the item the update makes of old (nil: none), every value
// evaluated on old, as DynamoDB evaluates them.
func (u *update) apply(old map[string]av) (map[string]av, error) {
	type write struct {
		path docPath
		val  av
	}
	var writes []write
	for _, s := range u.sets {
		v, err := s.val(old)
		if err != nil {
			return nil, err
		}
		writes = append(writes, write{s.path, v})
	}
	for _, a := range u.adds {
		cur := getPath(old, a.path)
		switch v := a.val.(type) {
		case *types.AttributeValueMemberN:
			if cur == nil {
				writes = append(writes, write{a.path, v})
				continue
			}
			n, ok := cur.(*types.AttributeValueMemberN)
			if !ok {
				return nil, errValidation("An operand in the update expression has an incorrect data type")
			}
			writes = append(writes, write{a.path, &types.AttributeValueMemberN{Value: formatRat(new(big.Rat).Add(ratOf(n.Value), ratOf(v.Value)))}})
		case *types.AttributeValueMemberSS:
			set := []string{}
			if cur != nil {
				s, ok := cur.(*types.AttributeValueMemberSS)
				if !ok {
					return nil, errValidation("An operand in the update expression has an incorrect data type")
				}
				set = slices.Clone(s.Value)
			}
			for _, e := range v.Value {
				if !slices.Contains(set, e) {
					set = append(set, e)
				}
			}
			writes = append(writes, write{a.path, &types.AttributeValueMemberSS{Value: set}})
		default:
			return nil, errValidation("ADD supports numbers and sets only")
		}
	}
	// DELETE takes elements out of a set; a set left empty is removed, as
	// DynamoDB stores no empty set.
	var emptied []docPath
	for _, d := range u.deletes {
		del, ok := d.val.(*types.AttributeValueMemberSS)
		if !ok {
			return nil, errValidation("dynamofake: DELETE supports string sets only")
		}
		cur := getPath(old, d.path)
		if cur == nil {
			continue
		}
		set, ok := cur.(*types.AttributeValueMemberSS)
		if !ok {
			return nil, errValidation("An operand in the update expression has an incorrect data type")
		}
		left := slices.DeleteFunc(slices.Clone(set.Value), func(e string) bool { return slices.Contains(del.Value, e) })
		if len(left) == 0 {
			emptied = append(emptied, d.path)
		} else {
			writes = append(writes, write{d.path, &types.AttributeValueMemberSS{Value: left}})
		}
	}
	item := cloneItem(old)
	if item == nil {
		item = map[string]av{}
	}
	for _, w := range writes {
		if err := setPath(item, w.path, cloneAV(w.val)); err != nil {
			return nil, err
		}
	}
	// Removals of list elements by index count on the old list: highest first.
	rm := slices.Clone(u.removes)
	sort.SliceStable(rm, func(i, j int) bool {
		a, b := rm[i][len(rm[i])-1], rm[j][len(rm[j])-1]
		return a.isIdx && b.isIdx && a.index > b.index
	})
	for _, r := range append(rm, emptied...) {
		removePath(item, r)
	}
	return item, nil
}

func setPath(item map[string]av, path docPath, v av) error {
	if len(path) == 1 {
		item[path[0].name] = v
		return nil
	}
	parent := getPath(item, path[:len(path)-1])
	last := path[len(path)-1]
	switch x := parent.(type) {
	case *types.AttributeValueMemberM:
		if !last.isIdx {
			x.Value[last.name] = v
			return nil
		}
	case *types.AttributeValueMemberL:
		if last.isIdx {
			if last.index >= len(x.Value) {
				x.Value = append(x.Value, v)
			} else {
				x.Value[last.index] = v
			}
			return nil
		}
	}
	return errValidation("The document path provided in the update expression is invalid for update")
}

func removePath(item map[string]av, path docPath) {
	if len(path) == 1 {
		delete(item, path[0].name)
		return
	}
	parent := getPath(item, path[:len(path)-1])
	last := path[len(path)-1]
	switch x := parent.(type) {
	case *types.AttributeValueMemberM:
		delete(x.Value, last.name)
	case *types.AttributeValueMemberL:
		if last.isIdx && last.index < len(x.Value) {
			x.Value = append(x.Value[:last.index], x.Value[last.index+1:]...)
		}
	}
}

// updatedNames are the top-level attributes an update touches.
func (u *update) updatedNames() []string {
	var out []string
	add := func(p docPath) {
		if !slices.Contains(out, p[0].name) {
			out = append(out, p[0].name)
		}
	}
	for _, s := range u.sets {
		add(s.path)
	}
	for _, r := range u.removes {
		add(r)
	}
	for _, a := range u.adds {
		add(a.path)
	}
	return out
}

func cloneAV(v av) av {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: x.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: x.Value}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: slices.Clone(x.Value)}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: x.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: x.Value}
	case *types.AttributeValueMemberL:
		out := make([]av, len(x.Value))
		for i, e := range x.Value {
			out[i] = cloneAV(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: cloneItem(x.Value)}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: slices.Clone(x.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: slices.Clone(x.Value)}
	case *types.AttributeValueMemberBS:
		out := make([][]byte, len(x.Value))
		for i, b := range x.Value {
			out[i] = slices.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: out}
	}
	return v
}

func cloneItem(item map[string]av) map[string]av {
	if item == nil {
		return nil
	}
	out := make(map[string]av, len(item))
	for k, v := range item {
		out[k] = cloneAV(v)
	}
	return out
}

// itemSize approximates DynamoDB's item size: names plus values.
func itemSize(item map[string]av) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v av) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return (len(strings.TrimLeft(x.Value, "-0"))+1)/2 + 1
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + itemSize(x.Value) + len(x.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range x.Value {
			n += len(s)
		}
		return n
	}
	return 1
}

// maxItemBytes is DynamoDB's item size limit, 400 KB.
const maxItemBytes = 400 * 1024
