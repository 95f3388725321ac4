package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"go.yaml.in/yaml/v3"

	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
)

const openAPIPath = "../../docs/openapi.yaml"

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

var pathParamRE = regexp.MustCompile(`\{([^{}]+)\}`)

// loadOpenAPI reads docs/openapi.yaml as plain maps and lists.
func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatalf("read %s: %v", openAPIPath, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", openAPIPath, err)
	}
	return doc
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// resolve follows a local $ref ("#/components/...") to what it names.
func resolve(doc map[string]any, v any) (map[string]any, error) {
	m := asMap(v)
	for range 10 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		target, err := pointer(doc, ref)
		if err != nil {
			return nil, err
		}
		m = asMap(target)
		if m == nil {
			return nil, fmt.Errorf("$ref %q does not name an object", ref)
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

// pointer looks up a local JSON pointer reference such as
// "#/components/schemas/EndpointView".
func pointer(doc map[string]any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the document", ref)
	}
	var cur any = doc
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m := asMap(cur)
		next, ok := m[tok]
		if m == nil || !ok {
			return nil, fmt.Errorf("$ref %q does not resolve (no %q)", ref, tok)
		}
		cur = next
	}
	return cur, nil
}

type operation struct {
	key      string // "METHOD /path"
	path     string
	pathItem map[string]any
	op       map[string]any
}

func operations(t *testing.T, doc map[string]any) []operation {
	t.Helper()
	paths := asMap(doc["paths"])
	if paths == nil {
		t.Fatal("the document has no paths")
	}
	var ops []operation
	for path, item := range paths {
		pi := asMap(item)
		for _, m := range httpMethods {
			if op, ok := pi[m]; ok {
				ops = append(ops, operation{key: strings.ToUpper(m) + " " + path, path: path, pathItem: pi, op: asMap(op)})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].key < ops[j].key })
	return ops
}

func TestOpenAPIVersion(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	v, _ := doc["openapi"].(string)
	if !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi is %q, want 3.1.x", v)
	}
	info := asMap(doc["info"])
	if info["title"] != "hookline" {
		t.Errorf("info.title is %v, want hookline", info["title"])
	}
}

func TestOpenAPIRoutesMatch(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	inCode := map[string]bool{}
	for _, rt := range api.Routes() {
		inCode[rt.Method+" "+rt.Path] = true
	}
	inDoc := map[string]bool{}
	for _, op := range operations(t, doc) {
		inDoc[op.key] = true
	}
	for k := range inCode {
		if !inDoc[k] {
			t.Errorf("route %s is in api.Routes() but not in %s", k, openAPIPath)
		}
	}
	for k := range inDoc {
		if !inCode[k] {
			t.Errorf("operation %s is in %s but not in api.Routes()", k, openAPIPath)
		}
	}
}

func TestOpenAPIOperations(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	for _, o := range operations(t, doc) {
		responses := asMap(o.op["responses"])
		if sec, ok := o.op["security"].([]any); ok && len(sec) == 0 {
			if _, ok := responses["401"]; ok {
				t.Errorf("%s: takes no credential (security: []) and documents 401", o.key)
			}
			continue
		}
		if _, ok := responses["401"]; !ok {
			t.Errorf("%s: no 401 response", o.key)
		}
		for code, r := range responses {
			if _, err := resolve(doc, r); err != nil {
				t.Errorf("%s: response %s: %v", o.key, code, err)
			}
		}

		// Path parameters: the operation's override the path item's.
		declared := map[string]bool{}
		for _, list := range [][]any{asList(o.pathItem["parameters"]), asList(o.op["parameters"])} {
			for _, p := range list {
				param, err := resolve(doc, p)
				if err != nil {
					t.Errorf("%s: parameter: %v", o.key, err)
					continue
				}
				if param["in"] != "path" {
					continue
				}
				name, _ := param["name"].(string)
				if param["required"] != true {
					t.Errorf("%s: path parameter %q is not required: true", o.key, name)
				}
				declared[name] = true
			}
		}
		inPath := map[string]bool{}
		for _, m := range pathParamRE.FindAllStringSubmatch(o.path, -1) {
			inPath[m[1]] = true
			if !declared[m[1]] {
				t.Errorf("%s: path parameter {%s} is not declared", o.key, m[1])
			}
		}
		for name := range declared {
			if !inPath[name] {
				t.Errorf("%s: declares path parameter %q that is not in the path", o.key, name)
			}
		}
	}
}

// TestOpenAPIRefs checks that every local $ref in the document resolves.
func TestOpenAPIRefs(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, err := pointer(doc, ref); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
			for k, x := range v {
				walk(where+"/"+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s/%d", where, i), x)
			}
		}
	}
	walk("#", doc)
}

// jsonNames lists the JSON property names of a struct type's fields, and
// those always present (no omitempty).
func jsonNames(typ reflect.Type) (names, always []string) {
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's fields are the outer object's, as
			// encoding/json writes them.
			n, a := jsonNames(f.Type)
			names, always = append(names, n...), append(always, a...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			always = append(always, name)
		}
	}
	sort.Strings(names)
	sort.Strings(always)
	return names, always
}

func TestOpenAPISchemasMatchTypes(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	schemas := asMap(asMap(doc["components"])["schemas"])
	for schema, v := range map[string]any{
		"EndpointView":      api.EndpointView{},
		"DeliveryView":      api.DeliveryView{},
		"AttemptView":       api.AttemptView{},
		"KeyView":           api.KeyView{},
		"DeadLetterView":    api.DeadLetterView{},
		"JobView":           api.JobView{},
		"StatsView":         api.StatsView{},
		"EndpointStatsView": api.EndpointStatsView{},
		"StatsBucketView":   api.StatsBucketView{},
		"MetricsView":       api.MetricsView{},
		"MetricsPeriodView": api.MetricsPeriodView{},
		"MetricsGroupView":  api.MetricsGroupView{},
		"CountsView":        api.CountsView{},
		"FailureCountsView": api.FailureCountsView{},
		"LatencyView":       api.LatencyView{},
		"HealthView":        api.HealthView{},
		"BreakerView":       api.BreakerView{},
		"LastFailureView":   api.LastFailureView{},
		"Problem":           api.Problem{},
		"FieldError":        api.FieldError{},
		"PublishedEvent":    api.PublishedEventView{},
		"TestEventView":     api.TestEventView{},
		"PortalLinkView":    api.PortalLinkView{},
		"SessionView":       api.SessionView{},
		"EgressView":        api.EgressView{},
	} {
		s, err := resolve(doc, schemas[schema])
		if err != nil || s == nil {
			t.Errorf("components.schemas.%s: missing (%v)", schema, err)
			continue
		}
		var inDoc []string
		for name := range asMap(s["properties"]) {
			inDoc = append(inDoc, name)
		}
		sort.Strings(inDoc)
		inCode, always := jsonNames(reflect.TypeOf(v))
		for _, name := range inCode {
			if !slices.Contains(inDoc, name) {
				t.Errorf("%s: property %q of the Go type is not in the schema", schema, name)
			}
		}
		for _, name := range inDoc {
			if !slices.Contains(inCode, name) {
				t.Errorf("%s: schema property %q is not a field of the Go type", schema, name)
			}
		}
		// required is exactly the fields always present (no omitempty).
		var required []string
		for _, r := range asList(s["required"]) {
			name, _ := r.(string)
			required = append(required, name)
		}
		sort.Strings(required)
		if !slices.Equal(required, always) {
			t.Errorf("%s: required is %v, want the fields without omitempty: %v", schema, required, always)
		}
	}
}

// documentedResponses maps each operation ("METHOD /path") to its
// documented statuses and, for each, the media type of its body ("" for
// none), read once from docs/openapi.yaml.
var documentedResponses = sync.OnceValues(func() (map[string]map[string]string, error) {
	b, err := os.ReadFile(openAPIPath)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for path, item := range asMap(doc["paths"]) {
		for _, m := range httpMethods {
			op := asMap(asMap(item)[m])
			if op == nil {
				continue
			}
			statuses := map[string]string{}
			for code, r := range asMap(op["responses"]) {
				resp, err := resolve(doc, r)
				if err != nil {
					return nil, err
				}
				statuses[code] = ""
				for mt := range asMap(resp["content"]) {
					statuses[code] = mt
				}
			}
			out[strings.ToUpper(m)+" "+path] = statuses
		}
	}
	return out, nil
})

// routePatterns finds the route of a request as the API's router does.
var routePatterns = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range api.Routes() {
		mux.HandleFunc(rt.Method+" "+rt.Path, func(http.ResponseWriter, *http.Request) {})
	}
	return mux
})

// requireDocumented fails tb if the answer rec to req is not one that
// docs/openapi.yaml documents: a status the operation does not list, or a
// body of another media type. Outside the operations, only 404 (no such
// path, or an unclean one) and 405 with Allow are answered. env.do calls
// it on every request of these tests, so every status they see is held to
// the document.
func requireDocumented(tb testing.TB, req *http.Request, rec *httptest.ResponseRecorder) {
	tb.Helper()
	ops, err := documentedResponses()
	require.NoError(tb, err)
	mt, _, _ := strings.Cut(rec.Header().Get("Content-Type"), ";")
	if rec.Code == http.StatusMethodNotAllowed {
		require.NotEmpty(tb, rec.Header().Get("Allow"), "405 names the allowed methods")
		require.Equal(tb, "application/problem+json", mt)
		return
	}
	op := ""
	if p := req.URL.Path; path.Clean(p) == p {
		_, pattern := routePatterns().Handler(req)
		if pattern != "" && strings.HasPrefix(pattern, req.Method+" ") {
			op = pattern
		}
	}
	if op == "" {
		require.Equal(tb, http.StatusNotFound, rec.Code, "%s %s is no operation: 404 or 405 only", req.Method, req.URL.Path)
		require.Equal(tb, "application/problem+json", mt)
		return
	}
	statuses, ok := ops[op]
	require.True(tb, ok, "operation %s is not in %s", op, openAPIPath)
	want, ok := statuses[strconv.Itoa(rec.Code)]
	require.True(tb, ok, "%s answered %d, which %s does not document for it (%s %.200s): %.300s",
		op, rec.Code, openAPIPath, req.Method, req.URL, rec.Body.String())
	require.Equal(tb, want, mt, "%s %d: the media type documented", op, rec.Code)
}

// Every operation documents what every route answers: 400 (a path or query
// the API Gateway adapter cannot parse), 401 and 500; 404 with a path
// parameter (an id over 256 bytes, or none such); 413 and 415 with a body;
// 503 on the admin routes (the operator key unreadable) and on replay; 403
// on a route that needs a scope (a portal link without it), and on no
// other.
func TestOpenAPIDocumentsEveryStatusOfEveryRoute(t *testing.T) {
	t.Parallel()
	ops, err := documentedResponses()
	require.NoError(t, err)
	doc := loadOpenAPI(t)
	bodies := map[string]bool{}
	for _, o := range operations(t, doc) {
		if o.op["requestBody"] != nil {
			bodies[o.key] = true
		}
	}
	for _, rt := range api.Routes() {
		key := rt.Method + " " + rt.Path
		want := []string{"400", "401", "500"}
		if rt.Public {
			want = []string{"400", "404", "500"}
		}
		if strings.Contains(rt.Path, "{") {
			want = append(want, "404")
		}
		if bodies[key] {
			want = append(want, "413", "415")
		}
		if rt.Operator || rt.Path == "/v1/dlq/replay" {
			want = append(want, "503")
		}
		if rt.Scope != "" {
			want = append(want, "403")
		}
		for _, code := range want {
			_, ok := ops[key][code]
			require.True(t, ok, "%s: %s not documented", key, code)
		}
		if _, ok := ops[key]["403"]; ok && rt.Scope == "" {
			t.Errorf("%s: documents 403, but the route needs no scope", key)
		}
	}
}

// The check itself: an undocumented status fails it.
func TestRequireDocumentedRefusesAnUndocumentedStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		method, target string
		status         int
		ok             bool
	}{
		{"GET", "/v1/endpoints", http.StatusOK, true},
		{"GET", "/v1/endpoints", http.StatusTeapot, false},
		{"GET", "/v1/endpoints", http.StatusNotFound, false}, // no path parameter: never 404
		{"GET", "/v1/endpoints/ep_1", http.StatusNotFound, true},
		{"POST", "/v1/endpoints/ep_1/enable", http.StatusUnsupportedMediaType, false},
		{"GET", "/v1/nothing", http.StatusNotFound, true},
		{"GET", "/v1/nothing", http.StatusBadRequest, false},
		{"GET", "/v1/endpoints/", http.StatusOK, false},
	} {
		t.Run(fmt.Sprint(tc.method, " ", tc.target, " ", tc.status), func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", "application/problem+json")
			if tc.status == http.StatusOK {
				rec.Header().Set("Content-Type", "application/json")
			}
			rec.WriteHeader(tc.status)
			ft := &fakeT{}
			func() {
				defer func() {
					if v := recover(); v != nil && v != "FailNow" {
						panic(v)
					}
				}()
				requireDocumented(ft, httptest.NewRequest(tc.method, tc.target, nil), rec)
			}()
			require.Equal(t, !tc.ok, ft.failed, "failed")
		})
	}
}

// fakeT records a failure instead of failing the test. Only the methods
// require calls are implemented; any other would panic on the nil TB.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; panic("FailNow") }
func (f *fakeT) Name() string          { return "fakeT" }

// Every list of scopes in the document (the mint request, its answer, the
// session, a 403's missing_scope) is exactly domain.Scopes(), in order.
func TestOpenAPIScopesAreTheDomains(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	schemas := asMap(asMap(doc["components"])["schemas"])
	var want []any
	for _, sc := range domain.Scopes() {
		want = append(want, string(sc))
	}
	for _, at := range []struct{ schema, prop string }{
		{"PortalLinkCreate", "scopes"}, {"PortalLinkView", "scopes"}, {"SessionView", "scopes"}, {"Problem", "missing_scope"},
	} {
		prop := asMap(asMap(asMap(schemas[at.schema])["properties"])[at.prop])
		require.NotNil(t, prop, "%s.%s", at.schema, at.prop)
		if items := asMap(prop["items"]); items != nil {
			prop = items
		}
		require.Equal(t, want, prop["enum"], "%s.%s", at.schema, at.prop)
	}
	desc, _ := asMap(asMap(asMap(doc["paths"])["/v1/admin/tenants/{tenant_id}/portal-links"])["post"])["description"].(string)
	for _, sc := range domain.Scopes() {
		require.Contains(t, desc, "`"+string(sc)+"`", "the mint operation says what %s allows", sc)
	}
}
