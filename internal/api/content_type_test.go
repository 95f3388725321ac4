package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/api"
)

// A body is read as JSON under no Content-Type, a JSON type, or the form type
// curl -d sends when the body is a JSON document; every other type is a 415
// that names it and says what to send (with Accept-Post or Accept-Patch).
func TestRequestBodyContentType(t *testing.T) {
	t.Parallel()
	const form = "application/x-www-form-urlencoded"
	const url = `"url":"https://hooks.example.com/ct"`
	tests := []struct {
		name        string
		method      string // POST /v1/endpoints, or PATCH an endpoint
		contentType string // "" sends none
		body        string
		status      int
		detail      string // a part of the problem's detail
	}{
		{name: "json", contentType: "application/json", body: `{` + url + `}`, status: 201},
		{name: "json with charset", contentType: "application/json; charset=utf-8", body: `{` + url + `}`, status: 201},
		{name: "json, upper case", contentType: "Application/JSON", body: `{` + url + `}`, status: 201},
		{name: "structured json suffix", contentType: "application/vnd.hookline+json", body: `{` + url + `}`, status: 201},
		{name: "none", contentType: "", body: `{` + url + `}`, status: 201},
		{name: "form carrying json (curl -d)", contentType: form, body: `{` + url + `}`, status: 201},
		{name: "form carrying json after white space", contentType: form, body: " \r\n\t{" + url + `}`, status: 201},
		{name: "form with charset carrying json", contentType: form + "; charset=UTF-8", body: `{` + url + `}`, status: 201},
		{name: "patch, form carrying json", method: "PATCH", contentType: form, body: `{"description":"from curl"}`, status: 200},
		{name: "patch, merge-patch json", method: "PATCH", contentType: "application/merge-patch+json", body: `{"description":"x"}`, status: 200},

		{name: "form carrying bad json is a json error", contentType: form, body: `{"url":`, status: 400, detail: "JSON"},
		{name: "form carrying a json array", contentType: form, body: `[{` + url + `}]`, status: 400, detail: "JSON object"},
		{name: "form carrying nothing", contentType: form, body: ``, status: 400, detail: "empty"},
		{name: "form carrying only white space", contentType: form, body: " \n ", status: 400, detail: "empty"},
		{name: "form over the cap in white space", contentType: form, body: strings.Repeat(" ", api.MaxBodyBytes+1) + `{}`, status: 413},
		{name: "a real form", contentType: form, body: `url=https%3A%2F%2Fhooks.example.com%2Fct`, status: 415, detail: "is a form"},
		{name: "patch, a real form", method: "PATCH", contentType: form, body: `description=x`, status: 415, detail: "is a form"},
		{name: "form carrying a json string", contentType: form, body: `"https://hooks.example.com/ct"`, status: 415, detail: "is a form"},
		{name: "text/plain", contentType: "text/plain", body: `{` + url + `}`, status: 415, detail: `"text/plain"`},
		{name: "text/xml", contentType: "text/xml", body: `<endpoint/>`, status: 415, detail: `"text/xml"`},
		{name: "multipart", contentType: "multipart/form-data; boundary=x", body: "--x\r\n\r\n{}\r\n--x--", status: 415, detail: `"multipart/form-data"`},
		{name: "json-looking but not json", contentType: "application/jsonp", body: `{` + url + `}`, status: 415, detail: `"application/jsonp"`},
		{name: "suffix outside application", contentType: "text/x+json", body: `{` + url + `}`, status: 415, detail: `"text/x+json"`},
		{name: "unparseable", contentType: "application/json; charset", body: `{` + url + `}`, status: 415, detail: "cannot be parsed"},
		{name: "unparseable, nul", contentType: "application/json; charset=\x00", body: `{` + url + `}`, status: 415, detail: "cannot be parsed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			key := e.newTenant("acme")
			method, target := "POST", "/v1/endpoints"
			if tc.method == "PATCH" {
				method, target = "PATCH", "/v1/endpoints/"+e.createEndpoint(key, nil).ID
			}
			before := e.store.endpointCount("acme")
			rec := e.do(method, target, key, tc.body, "Content-Type", tc.contentType)
			if tc.status < 300 {
				require.Equal(t, tc.status, rec.Code, rec.Body.String())
				require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
				return
			}
			p := requireProblem(t, rec, tc.status)
			require.Contains(t, p.Detail, tc.detail)
			require.Equal(t, before, e.store.endpointCount("acme"), "a refused body stores nothing")
			acceptPost, acceptPatch := rec.Header().Get("Accept-Post"), rec.Header().Get("Accept-Patch")
			switch {
			case tc.status != http.StatusUnsupportedMediaType:
				require.Empty(t, acceptPost+acceptPatch, "Accept-* only on a 415")
			case method == "PATCH":
				require.Equal(t, "application/json", acceptPatch)
				require.Empty(t, acceptPost)
			default:
				require.Equal(t, "application/json", acceptPost)
				require.Empty(t, acceptPatch)
			}
		})
	}
}

// Every route that takes a body follows the same rule: curl -d's form type
// carrying JSON is read, a real form is refused.
func TestEveryBodyRouteTakesJSONUnderTheFormType(t *testing.T) {
	t.Parallel()
	const form = "application/x-www-form-urlencoded"
	e := newEnv(t)
	key := e.newTenant("acme")
	ep := e.createEndpoint(key, nil)
	routes := []struct {
		method, target, key, body string
		status                    int
	}{
		{"POST", "/v1/admin/tenants", operatorKey, `{"tenant_id":"beta","name":"Beta"}`, 201},
		{"POST", "/v1/endpoints", key, `{"url":"https://hooks.example.com/f"}`, 201},
		{"PATCH", "/v1/endpoints/" + ep.ID, key, `{"description":"d"}`, 200},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret", key, `{"grace_seconds":60}`, 200},
		{"POST", "/v1/dlq/replay", key, `{"endpoint_id":"` + ep.ID + `"}`, 202},
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.target, func(t *testing.T) {
			rec := e.do(r.method, r.target, r.key, r.body, "Content-Type", form)
			require.Equal(t, r.status, rec.Code, rec.Body.String())
			rec = e.do(r.method, r.target, r.key, "a=1&b=2", "Content-Type", form)
			requireProblem(t, rec, http.StatusUnsupportedMediaType)
		})
	}
}

// Whatever the Content-Type and body: never a 5xx; a 4xx is a problem
// document; a body that is read at all is read exactly as under
// application/json (same status), and a form type is read only when its
// body starts, after white space, with { or [.
func FuzzBodyContentType(f *testing.F) {
	for _, s := range []struct{ ct, body string }{
		{"application/x-www-form-urlencoded", `{"url":"https://hooks.example.com/z"}`},
		{"application/x-www-form-urlencoded", `url=x`},
		{"application/x-www-form-urlencoded; charset=utf-8", " \n[1]"},
		{"", `{"url":"https://hooks.example.com/z"}`},
		{"application/problem+json", `{}`},
		{"text/plain", `{}`},
		{"multipart/form-data; boundary=\"a b\"", `{}`},
		{"application/json; charset=\x00", `{}`},
		{";", ``},
	} {
		f.Add(s.ct, []byte(s.body))
	}
	e := newEnv(f)
	key := e.newTenant("acme")
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		e.tb = t
		rec := e.do("POST", "/v1/endpoints", key, body, "Content-Type", contentType)
		require.Less(t, rec.Code, 500, rec.Body.String())
		if rec.Code >= 400 {
			checkProblem(t, rec)
		}
		if rec.Code == http.StatusUnsupportedMediaType {
			return
		}
		if mt := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0])); mt == "application/x-www-form-urlencoded" && rec.Code != http.StatusRequestEntityTooLarge {
			trimmed := strings.TrimLeft(string(body), " \t\r\n")
			require.True(t, trimmed == "" || trimmed[0] == '{' || trimmed[0] == '[', "a form body read as JSON: %q", body)
		}
		asJSON := e.do("POST", "/v1/endpoints", key, body, "Content-Type", "application/json")
		require.Equal(t, rec.Code, asJSON.Code, "same body, same answer: %s / %s", rec.Body.String(), asJSON.Body.String())
		for _, r := range []*httptest.ResponseRecorder{rec, asJSON} {
			if r.Code == http.StatusCreated { // keep the tenant under any endpoint limit
				id := decodeJSON[api.EndpointView](t, r).ID
				require.Equal(t, http.StatusNoContent, e.do("DELETE", "/v1/endpoints/"+id, key, nil).Code)
			}
		}
	})
}
