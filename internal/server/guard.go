package server

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// cookieName holds the auth token for the dashboard on a non-loopback host.
const cookieName = "drover_token"

// guard wraps every request: panic recovery, the loopback Host check, the
// bearer token and CSRF checks for mutating methods (not for tracker
// webhooks, which their signature authenticates), and the body limit.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.opts.Log.Error("http handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, "internal", "internal error; see the server log")
			}
		}()
		if s.opts.LoopbackOnly && !loopbackHost(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, "bad_host",
				"the Host header "+strconvQuote(r.Host)+" is not a loopback name; this server is bound to loopback (open it as http://127.0.0.1:PORT)")
			return
		}
		// A tracker's webhook carries its provider's signature, not drover's
		// token (postWebhook verifies it); nor is it a browser's request.
		webhook := strings.HasPrefix(r.URL.Path, "/api/v1/webhooks/")
		if s.opts.AuthToken != "" && !webhook && !s.authorized(w, r) {
			return
		}
		if !safeMethod(r.Method) && !webhook {
			if code, msg := s.csrfOK(r); code != "" {
				st := http.StatusForbidden
				if code == "unsupported_media_type" {
					st = http.StatusUnsupportedMediaType
				}
				writeError(w, st, code, msg)
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
		}
		next.ServeHTTP(w, r)
		if d := time.Since(start); d > 2*time.Second && !strings.HasSuffix(r.URL.Path, "/stream") {
			s.opts.Log.Warn("slow http request", "method", r.Method, "path", r.URL.Path, "duration", d)
		}
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// authorized checks the bearer token or the dashboard cookie. GET /?token=T
// with the right token sets the cookie and redirects to / so a browser can
// use the dashboard; the token then never appears in later URLs.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok := []byte(s.opts.AuthToken)
	if cred, ok := bearerToken(r); ok {
		if subtle.ConstantTimeCompare([]byte(cred), tok) == 1 {
			return true
		}
	} else if c, err := r.Cookie(cookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), tok) == 1 {
		return true
	} else if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") &&
		subtle.ConstantTimeCompare([]byte(q), tok) == 1 {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.opts.AuthToken, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		u := *r.URL
		qs := u.Query()
		qs.Del("token")
		u.RawQuery = qs.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="drover"`)
	writeError(w, http.StatusUnauthorized, "unauthorized",
		"this server needs Authorization: Bearer <server.auth_token> (browsers: open /?token=<server.auth_token> once)")
	return false
}

// bearerToken is the credential of an Authorization header with the Bearer
// scheme. The scheme name is case-insensitive (RFC 9110 section 11.1), so
// "bearer" and "BEARER" are the same scheme; the token is compared as sent.
func bearerToken(r *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(cred, " "), true
}

// csrfOK guards mutating requests against cross-site forgery. A request is
// refused when
//
//   - Sec-Fetch-Site is present and not same-origin or none, or
//   - Origin is present and its host differs from the Host header, or
//   - it carries a body whose Content-Type is not application/json (so a
//     cross-site form or text/plain post can never reach a handler; a
//     cross-site JSON post needs a CORS preflight, which this server never
//     grants), or
//   - it was authenticated by the dashboard cookie, or carries
//     X-CSRF-Token, and X-CSRF-Token is not this process's token (the
//     dashboard embeds it in a <meta name="csrf-token"> tag).
//
// Scripts (curl, CI) send a bearer token or, on loopback, nothing extra.
func (s *Server) csrfOK(r *http.Request) (code, msg string) {
	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" && sfs != "same-origin" && sfs != "none" {
		return "csrf", "cross-site request refused (Sec-Fetch-Site: " + sfs + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return "csrf", "cross-origin request refused (Origin " + strconvQuote(o) + " is not " + strconvQuote(r.Host) + ")"
		}
	}
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		ct := r.Header.Get("Content-Type")
		if i := strings.IndexByte(ct, ';'); i >= 0 {
			ct = ct[:i]
		}
		if !strings.EqualFold(strings.TrimSpace(ct), "application/json") {
			return "unsupported_media_type", "request bodies must be JSON: send Content-Type: application/json"
		}
	}
	_, cookieErr := r.Cookie(cookieName)
	hdr := r.Header.Get("X-CSRF-Token")
	_, bearer := bearerToken(r)
	if (hdr != "" || (cookieErr == nil && !bearer)) && subtle.ConstantTimeCompare([]byte(hdr), []byte(s.csrf)) != 1 {
		return "csrf", "missing or stale X-CSRF-Token; reload the dashboard"
	}
	return "", ""
}

func loopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return IsLoopback(h)
}

func strconvQuote(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
