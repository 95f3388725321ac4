// Package apigw runs plain net/http handlers behind Amazon API Gateway HTTP
// APIs (Lambda proxy integration, payload format version 2.0).
//
// # Requests
//
// [Request] turns a payload 2.0 event into an *http.Request:
//
//   - the method is requestContext.http.method;
//   - the path is rawPath (requestContext.http.path when rawPath is empty,
//     "/" when both are) and the query is rawQueryString, both kept as
//     sent; RequestURI is path plus "?" plus query;
//   - each entry of headers is set with [http.Header.Set], so names are
//     canonicalised; API Gateway has already lower-cased them and joined
//     repeated values with commas, and they are not split again;
//   - the cookies array, when present, becomes a single Cookie header, its
//     entries joined with "; ";
//   - Host is the "host" header, or requestContext.domainName when there
//     is none; like net/http's server, the Host header is removed from the
//     header map;
//   - the body is body, base64-decoded when isBase64Encoded is true, and
//     ContentLength is its length;
//   - RemoteAddr is requestContext.http.sourceIp, verbatim (no port);
//   - the request's context is the Lambda invocation's context, carrying
//     the event's requestContext ([EventContext]).
//
// A request that cannot be represented (an invalid method, a path that does
// not start with "/" or holds a bad percent-escape or a control character, a
// query with a bad percent-escape, a body that is not valid base64) is an
// error from Request, and [Handler] answers it 400 with an RFC 9457
// application/problem+json body. Handler never returns an error: API
// Gateway would turn one into a bare 500.
//
// # Responses
//
// The handler writes into an in-memory [http.ResponseWriter]. The status is
// the first one written (200 if the handler writes nothing; 1xx statuses are
// ignored). Headers are taken as they stood when the status was written,
// like net/http: one value goes into headers as is, several values of one
// name are joined with ", ", and every Set-Cookie value goes into cookies
// instead. The body is returned as a plain string when it is valid UTF-8
// and its Content-Type is textual (text/*, application/json,
// application/*+json, application/xml, application/javascript) or absent;
// otherwise it is base64-encoded and isBase64Encoded is set. No Content-Type
// is sniffed or added.
//
// A panic in the handler is recovered and logged with [slog.Default], and
// the client gets 500 with a problem+json body whose detail is "internal
// error"; nothing of the panic reaches the client, and the panic is not
// re-raised.
package apigw
