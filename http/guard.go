package http

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/memento-ai/memento"
)

// Memento has no accounts: whoever reaches its port can read and write any
// user's memory. The default port is on loopback, so the parties that reach
// it are local programs and, through the user's browser, every web page the
// user opens. The guard closes the browser's ways in, before any route runs:
//
//   - A page on another site may send "simple" requests (text/plain or
//     form-encoded bodies) without asking first. Bodies must therefore be
//     application/json, which a browser sends to another origin only after
//     a CORS preflight, and the preflight succeeds only for configured
//     origins.
//   - Browsers name the page behind a request in Origin and, for newer
//     ones, say in Sec-Fetch-Site whether it is cross-site. A foreign
//     Origin is refused outright, and a cross-site request that would
//     change data is refused even without one.
//   - DNS rebinding: a page on evil.example re-resolves its own name to
//     127.0.0.1, after which its requests are same-origin for the browser
//     but carry "Host: evil.example". Host must be a loopback name, the
//     listen address or a configured name.
//
// The guard also reads every request body whole, within MaxBodyBytes, so
// that a chunked body over the limit is refused with 413 like one whose
// Content-Length says so, and so that reading a body is bounded by the
// server's read timeout rather than left to each handler.
type guard struct {
	origins   map[string]bool // configured origins, normalised (NormalizeOrigin)
	anyHost   bool            // "*" among the allowed hosts: Host is not checked
	names     map[string]bool // host names allowed on any port
	hostPorts map[string]bool // "name port" pairs allowed on one port
	// listen is the IP the server listens on, when known: an IP-literal
	// Host equal to it (or any IP literal, when it is unspecified) is
	// allowed, since a rebinding page's Host is always a name.
	listen netip.Addr
	// err, when set, is a configuration error: every request is refused
	// with it (Open reports it before listening).
	err error
	log *slog.Logger
}

// corsAllowHeaders are the request headers the API reads, which a
// configured origin may send after a preflight.
const corsAllowHeaders = "Authorization, Content-Type, If-Match, X-Memento-Tenant"

// newGuard builds the guard of a server from its allow-lists and address.
func newGuard(s *Server) *guard {
	g := &guard{origins: map[string]bool{}, names: map[string]bool{}, hostPorts: map[string]bool{}, log: s.Logger}
	for _, o := range s.AllowedOrigins {
		n, err := NormalizeOrigin(o)
		if err != nil {
			g.err = err
			return g
		}
		g.origins[n] = true
	}
	for _, h := range s.AllowedHosts {
		if err := CheckAllowedHost(h); err != nil {
			g.err = err
			return g
		}
		if h == "*" {
			g.anyHost = true
			continue
		}
		name, port, _ := splitHost(h)
		if port == "" {
			g.names[name] = true
		} else {
			g.hostPorts[name+" "+port] = true
		}
	}
	if s.Addr != "" {
		if host, _, err := net.SplitHostPort(s.Addr); err == nil {
			g.setListenHost(host)
		}
	}
	return g
}

// setListenHost records the host part of the listen address: an IP, or a
// name the operator chose, which is then allowed in Host.
func (g *guard) setListenHost(host string) {
	if host == "" {
		g.listen = netip.IPv6Unspecified()
		return
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		g.listen = ip.Unmap()
		return
	}
	g.names[strings.TrimSuffix(strings.ToLower(host), ".")] = true
}

// wrap puts the guard in front of next.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.err != nil {
			writeError(w, r, g.log, fmt.Errorf("http guard: %w", g.err))
			return
		}
		if !g.hostAllowed(r.Host) {
			g.refuse(w, r, memento.Errorf(memento.EFORBIDDEN, "host %s is not a name this server answers to; add it to the allowed hosts", quoteShort(r.Host)))
			return
		}
		listed := false
		if len(g.origins) > 0 {
			// Responses differ by Origin once some origins get CORS headers.
			w.Header().Add("Vary", "Origin")
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			o := strings.ToLower(origin)
			listed = g.origins[o]
			if !listed && o != ownOrigin(r) {
				g.refuse(w, r, memento.Errorf(memento.EFORBIDDEN, "origin %s may not call this server; add it to the allowed origins", quoteShort(origin)))
				return
			}
			if listed {
				h := w.Header()
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Expose-Headers", "ETag")
				if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
					h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
					h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
					h.Set("Access-Control-Max-Age", "600")
					h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
					w.WriteHeader(http.StatusNoContent)
					return
				}
			}
		}
		if changesState(r.Method) && !listed {
			// same-site covers other ports of localhost, which are other
			// programs' pages: only a configured origin may write from them.
			switch site := r.Header.Get("Sec-Fetch-Site"); site {
			case "cross-site", "same-site":
				g.refuse(w, r, memento.Errorf(memento.EFORBIDDEN, "a %s request from another site may not change data here; add its origin to the allowed origins", r.Method))
				return
			}
		}
		if err := checkMediaType(r); err != nil {
			g.refuse(w, r, err)
			return
		}
		if err := readBody(r); err != nil {
			// The rest of the body, if any, is not read: the connection
			// cannot carry another request.
			w.Header().Set("Connection", "close")
			var ae *apiError
			if errors.As(err, &ae) {
				writeJSON(w, ae.status, ae.ErrorBody)
				return
			}
			writeError(w, r, g.log, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request the guard turned away, logging it at debug
// level: a stream of them is an attack or a misconfigured client, and
// either is found by the metrics' status counts.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	g.log.DebugContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path, "host", r.Host, "origin", r.Header.Get("Origin"), "err", err)
	writeError(w, r, g.log, err)
}

// hostAllowed reports whether a request's Host names this server.
func (g *guard) hostAllowed(host string) bool {
	if g.anyHost {
		return true
	}
	name, port, ok := splitHost(host)
	if !ok {
		return false
	}
	// The port is not compared for names: a rebinding page's Host differs
	// by its name, and comparing ports would break SSH tunnels and port
	// mappings (localhost:9000 forwarded to :8080) without stopping any
	// attack.
	if name == "localhost" || g.names[name] || g.hostPorts[name+" "+port] {
		return true
	}
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || (g.listen.IsValid() && (g.listen.IsUnspecified() || g.listen == ip))
}

// ownOrigin is the origin of the server's own pages as the request reached
// it: the scheme of the connection and the Host it named.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + strings.ToLower(r.Host)
}

// changesState reports whether a method may change data. Browsers send
// GET, HEAD and OPTIONS cross-site freely; they must never write.
func changesState(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// checkMediaType refuses a body that is not JSON. The one upload route,
// POST /v1/chat/audio, is let through here by its path, explicitly, and
// takes multipart/form-data only (audio.go).
func checkMediaType(r *http.Request) error {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil
	}
	if isAudioUpload(r) {
		return checkAudioMediaType(r)
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		// Nothing to decode; a route that needs a body says so itself.
		return nil
	}
	typ, params, err := mime.ParseMediaType(ct)
	ok := err == nil && typ == "application/json"
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			ok = false
		}
	}
	if !ok {
		if ct == "" {
			return memento.Errorf(memento.EUNSUPPORTED, "the request body must be JSON sent with Content-Type: application/json, got no Content-Type")
		}
		hint := ""
		if typ == "application/x-www-form-urlencoded" {
			hint = " (what curl -d sends unless told otherwise)"
		}
		return memento.Errorf(memento.EUNSUPPORTED, "the request body must be JSON sent with Content-Type: application/json, got %s%s", quoteShort(ct), hint)
	}
	return nil
}

// readBody reads the request body whole, refusing one over MaxBodyBytes
// whether its length was declared or not, and puts it back in memory for
// the handler.
func readBody(r *http.Request) error {
	limit := int64(MaxBodyBytes)
	if isAudioUpload(r) {
		limit = MaxAudioBytes
	}
	if r.ContentLength > limit {
		return memento.Errorf(memento.ETOOLARGE, "request body is %d bytes, over the limit of %d", r.ContentLength, limit)
	}
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return &apiError{status: http.StatusRequestTimeout, ErrorBody: ErrorBody{ErrorDetail{Code: codeFor(http.StatusRequestTimeout), Message: "the request body did not arrive within the server's read timeout"}}}
		}
		return memento.WrapError(memento.EINVALID, err, "the request body could not be read: it ended early or its chunked encoding is malformed")
	}
	if int64(buf.Len()) > limit {
		return memento.Errorf(memento.ETOOLARGE, "request body is over the limit of %d bytes", limit)
	}
	r.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
	r.ContentLength = int64(buf.Len())
	r.TransferEncoding = nil
	return nil
}

// NormalizeOrigin checks a configured origin, such as
// https://app.example.com or http://localhost:3000, and returns it in the
// form browsers send (lower case, no path). Its errors name the entry.
func NormalizeOrigin(o string) (string, error) {
	bad := func(why string) (string, error) {
		return "", memento.Errorf(memento.EINVALID, "%q is not an origin such as https://app.example.com: %s", o, why)
	}
	if o == "*" {
		return bad("a wildcard would let every web page use the API")
	}
	u, err := url.Parse(o)
	if err != nil {
		return bad(err.Error())
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("the scheme must be http or https")
	case u.Host == "":
		return bad("it has no host")
	case u.User != nil:
		return bad("it must not carry a user name")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return bad("it must not have a path, query or fragment")
	}
	if _, _, ok := splitHost(u.Host); !ok {
		return bad("its host or port is malformed")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// CheckAllowedHost checks a configured host: a name or IP, optionally
// with a port (then only that port is allowed), or "*" for any Host. Its
// errors name the entry.
func CheckAllowedHost(h string) error {
	if h == "*" {
		return nil
	}
	name, _, ok := splitHost(h)
	if !ok || name == "" || strings.ContainsAny(h, "/@ ") {
		return memento.Errorf(memento.EINVALID, "%q is not a host name such as memento.example.com or memento.example.com:8443", h)
	}
	return nil
}

// splitHost splits a Host value into its lower-case name (IPv6 without
// brackets, no trailing dot) and port, which may be empty. ok is false
// for a malformed value.
func splitHost(h string) (name, port string, ok bool) {
	if h == "" {
		return "", "", false
	}
	rest := ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", "", false
		}
		name, rest = h[1:end], h[end+1:]
		if _, err := netip.ParseAddr(name); err != nil {
			return "", "", false
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		name, rest = h[:i], h[i:]
		if strings.ContainsRune(name, ':') {
			return "", "", false // an IPv6 address must be bracketed
		}
	} else {
		name = h
	}
	if rest != "" {
		if rest[0] != ':' {
			return "", "", false
		}
		port = rest[1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return "", "", false
		}
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':' || c == '%') {
			return "", "", false
		}
	}
	return name, port, name != ""
}

// quoteShort quotes a client-supplied value for a message, cut to a
// length a person reads.
func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strconv.Quote(s)
}
