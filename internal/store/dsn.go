package store

import (
	"net/url"
	"regexp"
	"strings"
)

// DSNMask is what RedactDSN puts in place of a password.
const DSNMask = "****"

var (
	// keyPassword is a password given as a key: libpq's keyword/value form
	// (password=x, password = 'x y') and a URL's query (?password=x&...).
	keyPassword = regexp.MustCompile(`(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)
	// rawUserinfo is a URL's user:password@ when the URL does not parse
	// (a password with a character it should have escaped).
	rawUserinfo = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://[^:@/]*:)[^@]*@`)
)

// RedactDSN returns a store DSN fit to print: the password masked with
// DSNMask wherever it is given (a URL's user:password@, a URL's query
// parameter password=, or libpq's keyword/value password=). A DSN without
// a password comes back unchanged.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	switch {
	case err != nil:
		dsn = rawUserinfo.ReplaceAllString(dsn, "${1}"+DSNMask+"@")
	case u.User != nil:
		if _, ok := u.User.Password(); ok {
			// url escapes '*' in a password; put the mask back as written.
			u.User = url.UserPassword(u.User.Username(), DSNMask)
			dsn = strings.Replace(u.String(), url.PathEscape(DSNMask), DSNMask, 1)
		}
	}
	return keyPassword.ReplaceAllString(dsn, "${1}"+DSNMask)
}
