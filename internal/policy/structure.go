package policy

import (
	"regexp"
	"strconv"
	"strings"
)

// Structure in free text: the tokens an agent's error text carries in a
// machine's words, which stay put while the sentences around them change
// between CLI versions and between the programs that print them. Classify
// reads them before the phrase table, for every agent kind:
//
//   - an HTTP status, in the shapes statuses come in ("API Error: 529",
//     "unexpected status 401", "HTTP/1.1 429", `"code": 429`, "402 Payment
//     Required"; structure_status.go);
//   - an API error type or code ("rate_limit_error", "insufficient_quota"),
//     a gRPC / google.rpc status name ("RESOURCE_EXHAUSTED", "code =
//     Unavailable") or a library's error class (openai.AuthenticationError,
//     litellm.RateLimitError, httpx.ConnectTimeout, reqwest's kind:
//     ConnectionRefused, Go's "context deadline exceeded";
//     structure_tokens.go);
//   - an errno, by name or in its C library words with the shapes Python,
//     Rust and Windows print it in ("ECONNREFUSED", "[Errno 113] No route
//     to host", "Read-only file system (os error 30)", "actively refused";
//     structure_errno.go).
//
// A status or a type names a family of kinds; the phrase families then pick
// the kind within it (a 429 that says "usage limit" is a usage window). A
// status and a type read together: the type narrows the status's family
// when its kind is in it, and where they disagree (an invalid_request_error
// beside an HTTP 401) the status wins, and the source says so; only the
// catch-all 400 gives way to a specific type beside it. The corpus in
// testdata/corpus.jsonl is the evidence for the tokens.

// family is a set of kinds one structural token allows, and the kind it
// means when no phrase narrows it.
type family struct {
	name    string
	def     Kind
	allowed []Kind
}

var (
	famBadRequest = family{"400", KindInvalidInput, []Kind{KindUsageLimited, KindQuotaExhausted, KindContextExhausted,
		KindConfigError, KindAuthFailed, KindPermissionDenied, KindRefused, KindAgentFailed, KindInvalidInput}}
	famUnauthorized = family{"401", KindAuthFailed, []Kind{KindQuotaExhausted, KindAuthFailed}}
	famPayment      = family{"402", KindQuotaExhausted, []Kind{KindUsageLimited, KindQuotaExhausted}}
	// An API's 403 is about the key or account (no access to the model,
	// organisation, region or client), the same for every card: auth_failed.
	// A tool or sandbox denial inside the agent that happens to print a 403
	// is narrowed to permission_denied by its phrase (tool_permission).
	famForbidden = family{"403", KindAuthFailed, []Kind{KindRefused, KindPermissionDenied, KindUsageLimited, KindQuotaExhausted, KindAuthFailed}}
	famNotFound  = family{"404", KindConfigError, []Kind{KindConfigError}}
	// A status that says the request went to the wrong place or in a form
	// the server no longer takes (RFC 9110: 405 Method Not Allowed, 410
	// Gone, 426 Upgrade Required): the base URL, the proxy in front of it
	// or the client's version, the same for every card. (A base URL that
	// points at a web page answers POST with 405.)
	famEndpoint = family{"endpoint", KindConfigError, []Kind{KindConfigError}}
	famTimeout  = family{"408", KindTimeout, []Kind{KindTimeout}}
	famTooLarge = family{"413", KindContextExhausted, []Kind{KindContextExhausted}}
	famTooMany  = family{"429", KindRateLimited, []Kind{KindUsageLimited, KindQuotaExhausted, KindRateLimited}}
	famUsage    = family{"usage", KindUsageLimited, []Kind{KindUsageLimited}}
	famServer   = family{"5xx", KindProviderUnavailable, []Kind{KindTimeout, KindStalled, KindNetwork, KindProviderUnavailable}}

	// Families of tokens that are not HTTP statuses.
	famDeadline   = family{"deadline", KindTimeout, []Kind{KindNetwork, KindTimeout}}                                          // a request that got no answer in time
	famNetwork    = family{"network", KindNetwork, []Kind{KindNetwork}}                                                        // no server answered: the operator's network
	famConfig     = family{"config", KindConfigError, []Kind{KindAuthFailed, KindConfigError}}                                 // the agent's own configuration, the same for every card
	famSandbox    = family{"sandbox", KindPermissionDenied, []Kind{KindConfigError, KindWorkspaceSetup, KindPermissionDenied}} // a file or sandbox denial inside the agent (its own config file denied: its setup; its working directory unreadable: the workspace's)
	famDisk       = family{"disk", KindWorkspaceSetup, []Kind{KindWorkspaceSetup}}                                             // the machine's disk, not the card
	famRefusal    = family{"refusal", KindRefused, []Kind{KindRefused}}                                                        // a content policy declined the request
	famConnection = family{"connection", KindNetwork, []Kind{KindTimeout, KindNetwork, KindProviderUnavailable}}               // an SDK's "no answer came"
)

func statusFamily(code int) (family, bool) {
	switch {
	case code == 400 || code == 422:
		return famBadRequest, true
	case code == 401:
		return famUnauthorized, true
	case code == 402:
		return famPayment, true
	case code == 403 || code == 451: // 451: unavailable for legal reasons, the account's region
		return famForbidden, true
	case code == 404:
		return famNotFound, true
	case code == 405 || code == 410 || code == 426:
		return famEndpoint, true
	case code == 421: // misdirected: a reused connection the server will not answer on; retried on a new one
		return famServer, true
	case code == 408:
		return famTimeout, true
	case code == 413:
		return famTooLarge, true
	case code == 429:
		return famTooMany, true
	case code >= 500 && code <= 599:
		return famServer, true
	}
	return family{}, false
}

// byTextStructure reads the structure in an error text: a status or an
// error type names a family, which the phrase table narrows; an errno names
// its own. The message is the line that decided.
//
// A command agent's stderr is any program's output: where it shows a test
// runner's report (lookAlike), a status or a type there may be the code
// under test answering, so it decides only with a phrase of its family.
func byTextStructure(text string, anyProgram bool) (Classification, bool) {
	guarded := lookAlike(text, anyProgram)
	decide := func(fam family, src string, at int) (Classification, bool) {
		if fam.name == famDeadline.name {
			// A deadline is the network's when the connection itself
			// never came up (Go's "dial tcp …: i/o timeout (context
			// deadline exceeded)"), else a request that got no answer in
			// time. The errno decides, not the wrapper's words (undici
			// wraps every failure in "fetch failed").
			if e, ok := earliest(text, errnoRows, "errno"); ok && e.fam.name == famNetwork.name {
				return Classification{Kind: KindNetwork, Source: src + ",errno=" + e.word, Message: lineAt(text, e.at)}, true
			}
			fam.allowed = []Kind{KindTimeout}
		}
		if len(fam.allowed) == 1 && !guarded {
			return Classification{Kind: fam.def, Source: src, Message: lineAt(text, at)}, true
		}
		if p, ok := matchPhraseIn(text, fam.allowed); ok {
			// In a test runner's report a phrase may narrow but not pause
			// the profile, as everywhere else.
			if guarded && Spec(p.Kind).ProfileLevel() {
				return Classification{}, false
			}
			return Classification{Kind: p.Kind, Source: src + ",phrase:" + p.Name, Message: matchedLine(p, text)}, true
		}
		if (fam.name == famServer.name || fam.name == famConnection.name) && !guarded {
			// A server error or a client's catch-all class (litellm's
			// InternalServerError, APIConnectionError) that carries a
			// cause of another family is that cause: proxies answer a
			// revoked key, a context overflow or a certificate their
			// client refused with a 500 ("HTTP 500: … Invalid API key").
			// Only what the status's own line and the few after it say
			// (its body), not other lines of the log, and only a cause a
			// server's answer can carry: never one that counts against the
			// card or blocks it for a word (the provider's own traceback
			// is not the agent's failure). The corpus gained 4, lost none.
			body := linesFrom(text, at, 4)
			if p, ok := matchPhraseIn(body, nil); ok && carried(p.Kind) {
				return Classification{Kind: p.Kind, Source: src + ",carries:phrase:" + p.Name, Message: matchedLine(p, body)}, true
			}
			if h, ok := matchLexicon(body, nil); ok && !hasKind(fam.allowed, h.kind) && carried(h.kind) {
				return Classification{Kind: h.kind, Source: src + ",carries:lexicon:" + h.term, Message: lineAt(text, at)}, true
			}
		}
		if guarded {
			return Classification{}, false
		}
		if fam.name == famTooMany.name && overloaded.MatchString(text) {
			// A 429 (or a rate_limit_error) whose server says it is
			// overloaded is the provider's capacity, not this client's
			// rate: Moonshot answers its engine_overloaded_error so.
			return Classification{Kind: KindProviderUnavailable, Source: src + ",overloaded", Message: lineAt(text, at)}, true
		}
		// A 400 is the catch-all (see below): where no phrase narrows it,
		// its words may still name the kind within its family ("400
		// provider not found"). Only the 400's: the lexicon's permission
		// words beside a 403 are the key's, not a tool's (the corpus lost 7
		// with every family, gained 2 with the 400's alone).
		if fam.name == famBadRequest.name {
			if h, ok := matchLexicon(text, fam.allowed); ok {
				return Classification{Kind: h.kind, Source: src + ",lexicon:" + h.term, Message: lineAt(text, at)}, true
			}
		}
		return Classification{Kind: fam.def, Source: src, Message: lineAt(text, at)}, true
	}
	if line, ok := requestOverLimit(text); ok && !guarded {
		return Classification{Kind: KindContextExhausted, Source: "text:requested>limit", Message: line}, true
	}
	tok, hasTok := textToken(text)
	if code, at, ok := textStatus(text); ok {
		fam, _ := statusFamily(code)
		src := "text:status=" + strconv.Itoa(code)
		if hasTok {
			switch {
			case tok.fam.def == fam.def:
			case fam.name == famBadRequest.name:
				// A 400 is the catch-all many APIs answer everything with
				// (Google a bad key, Bedrock a throttle or its own 500): a
				// specific type beside it says more. A server's type
				// beside a 400 leaves the 400's phrases a say too (Ollama
				// types "does not support tools" api_error), all but the
				// card's input, which the type says it was not.
				if tok.fam.name == famServer.name {
					tok.fam.allowed = append(without(famBadRequest.allowed, KindInvalidInput), tok.fam.allowed...)
				}
				return decide(tok.fam, src+",type="+tok.word, tok.at)
			case hasKind(fam.allowed, tok.fam.def):
				// The type names the kind within the status's family (a 429
				// whose code is insufficient_quota is exhausted credit).
				fam.def = tok.fam.def
				src += ",type=" + tok.word
			default:
				// They disagree: the status is what the server answered.
				src += ",overruled:type=" + tok.word
			}
		}
		return decide(fam, src, at)
	}
	if hasTok {
		return decide(tok.fam, "text:"+tok.by+"="+tok.word, tok.at)
	}
	return Classification{}, false
}

// overloaded is a server saying it has no capacity now.
var overloaded = regexp.MustCompile(`(?i)\b(engine|server|model|service|upstream)s? (is |are )?(currently |temporarily )?overloaded\b|\bengine_overloaded`)

// carried says whether a server's error may carry kind k as its cause: the
// account's, the setup's, a limit, the size of the request, the network.
func carried(k Kind) bool {
	switch k {
	case KindAuthFailed, KindConfigError, KindQuotaExhausted, KindUsageLimited, KindRateLimited,
		KindContextExhausted, KindNetwork, KindTimeout, KindWorkspaceSetup:
		return true
	}
	return false
}

// linesFrom is text from the start of the line at byte at, n lines long.
func linesFrom(text string, at, n int) string {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := start
	for i := 0; i < n && end < len(text); i++ {
		j := strings.IndexByte(text[end:], '\n')
		if j < 0 {
			end = len(text)
			break
		}
		end += j + 1
	}
	return text[start:end]
}

// without returns a copy of ks without k.
func without(ks []Kind, k Kind) []Kind {
	var out []Kind
	for _, x := range ks {
		if x != k {
			out = append(out, x)
		}
	}
	return out
}

// hasKind reports whether k is one of ks.
func hasKind(ks []Kind, k Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}
