package fnenv

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// DefaultPortalMinTTL is the shortest life of a portal link outside the
// local cloud's deployment (APIEnv.PortalMinTTL).
const DefaultPortalMinTTL = time.Minute

// ParseFrameAncestors checks the pages that may embed the console in a frame
// (the CSP's frame-ancestors): sources separated by spaces or commas, each
// 'self' or an origin, "https://app.example.com" or
// "http://localhost:8080" (a scheme, a host, an optional port; no path,
// query, user or wildcard). Empty (or 'none' alone): nil, no page may frame
// it. The origins come back as given, in order.
func ParseFrameAncestors(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })
	if len(fields) == 0 || len(fields) == 1 && fields[0] == "'none'" {
		return nil, nil
	}
	for _, f := range fields {
		if f == "'self'" {
			continue
		}
		if f == "'none'" {
			return nil, fmt.Errorf("'none' cannot be combined with other sources")
		}
		if err := checkOrigin(f); err != nil {
			return nil, fmt.Errorf("frame ancestor %q: %w", f, err)
		}
	}
	return fields, nil
}

// checkOrigin accepts scheme://host[:port] with scheme http or https.
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not an origin: %v", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("want 'self' or an origin such as https://app.example.com")
	case u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		return fmt.Errorf("an origin is a scheme, a host and an optional port, nothing else")
	case strings.ContainsAny(u.Host, "*;'\"") || u.Hostname() == "":
		return fmt.Errorf("the host %q is not a host name", u.Host)
	}
	if p := u.Port(); p != "" {
		for _, c := range p {
			if c < '0' || c > '9' {
				return fmt.Errorf("the port %q is not a number", p)
			}
		}
	}
	for _, c := range u.Hostname() {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':' || c == '[' || c == ']') {
			return fmt.Errorf("the host %q is not a host name", u.Hostname())
		}
	}
	return nil
}
