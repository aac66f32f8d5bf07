package policy

import (
	"regexp"
	"strings"
	"unicode"
)

// The lexicon is the last reader of a failure's text, after the typed
// fields, the structure and the phrase table have found nothing: not
// sentences but the vocabulary each kind of failure is talked about in, so
// that wording nobody here has seen still lands in its family. Every kind
// has two lists of terms over the text made plain (lower case, camelCase and
// snake_case split into words, white space made one space):
//
//   - said: terms that name the failure by themselves ("unauthorized",
//     "rate limit", "context window", "timed out");
//   - about: terms that name what failed ("credentials", "quota",
//     "settings", "sandbox") and count only with a word of trouble
//     ("invalid", "exceeded", "missing", "failed", "denied", …) at most
//     troubleReach words away.
//
// The said terms of every kind are tried before any about term, each pass in
// the order of lexicon (narrow kinds before broad ones: a "usage limit" is a usage
// window before it is a limit, an "API key" failure the account's before it
// is a permission). Only the text's tail is read (lexiconTail bytes), where
// a CLI prints the error it stopped on.
type lexRow struct {
	kind  Kind
	said  *regexp.Regexp
	about *regexp.Regexp
}

const (
	troubleReach = 6
	lexiconTail  = 2000
)

func lex(kind Kind, said, about string) lexRow {
	r := lexRow{kind: kind, said: regexp.MustCompile(`\b(?:` + said + `)\b`)}
	if about != "" {
		r.about = regexp.MustCompile(`\b(?:` + about + `)\b`)
	}
	return r
}

var trouble = regexp.MustCompile(`\b(?:errors?|fail\w*|invalid|exceed\w*|reached|hit|denied|deny|missing|expired?|not found|unable|cannot|can't|could ?n['o]t|refus\w*|reject\w*|limits?|exhausted|insufficient|unknown|unsupported|not supported|wrong|bad|incorrect|required|requires|malformed|disabled|revoked|blocked|forbidden|unrecogni[sz]ed|unexpected|not set|not allowed|no longer|out of|ran out|problem)\b`)

// lexicon is tried in this order, said terms first (see above).
var lexicon = []lexRow{
	lex(KindRefused,
		`(?:safety|harmful|prohibited|inappropriate|unsafe|sensitive) (?:content|request|output|response|reasons?|filters?|settings|system|check)|content (?:polic\w*|filter\w*|moderation)|policy violation|violat\w* (?:the |our |its |their )?(?:usage |content |acceptable use )?polic\w*|refus(?:al|ed to (?:answer|respond|help|comply|assist|continue))|moderation|(?:flagged|blocked) (?:as|for) (?:unsafe|harmful|inappropriate|safety|policy)|safeguards?|refused (?:this|the|your) request|(?:response|prompt|output|completion) was filtered|blocked as it`,
		`safety|moderation|usage polic\w*|content polic\w*|acceptable use`),
	lex(KindMaxTurns,
		`max(?:imum)? (?:number of )?(?:turns?|iterations?|steps?|rounds?|actions|tool calls|tool uses|agent steps)|recursion limit|(?:turn|iteration|step|round) (?:limit|cap|budget)|too many (?:turns|iterations|steps)`,
		`turns|iterations`),
	lex(KindUsageLimited,
		`usage (?:limit|cap|quota|allowance)s?|(?:daily|weekly|monthly|hourly|5 hour|five hour) (?:limit|quota|cap|allowance|usage)|(?:plan|subscription)(?:'s)? (?:limit|quota|allowance)s?|message (?:limit|cap)|upgrade (?:to|your) (?:a )?(?:pro|plus|max|team|premium)\b(?: plan)?|(?:try again|resets?|available again) (?:at|on|after) \d{1,2}(?::\d\d)? ?(?:am|pm)?|you'?v?e? hit your (?:\w+ )?limit|session limit|resets? \d{1,2}(?::\d\d)? ?(?:am|pm)|free (?:limit|usage)|out of (?:\S+ ){0,2}messages`,
		`usage|plan`),
	lex(KindQuotaExhausted,
		`(?:insufficient|no|not enough|out of|zero|negative) (?:credits?|balance|funds|quota)|quota (?:\w+ )?(?:exceeded|exhausted|reached|used up|depleted|is 0)|(?:credits?|balance|funds) (?:\w+ )?(?:too low|exhausted|depleted|insufficient|run out|ran out|used up)|billing|payment|top ?up|spend(?:ing)? (?:limit|cap)|(?:max |monthly )?budget (?:\w+ )?(?:exceeded|reached|exhausted)|(?:crossed|exceeded|over) (?:the |your |its )?(?:\w+ )?budget|exceeded (?:your |the )?(?:current )?quota|insufficient quota`,
		`quota|credits?|balance|subscription|funds|budget|spend`),
	lex(KindRateLimited,
		`rate ?limit\w*|throttl\w*|too many (?:requests|concurrent \w+)|per (?:minute|second)|rpm|tpm|rps|concurren\w* (?:limit|requests)|slow down`,
		``),
	lex(KindContextExhausted,
		`context (?:window|length|limit|size|overflow)|too (?:long|large|big) for (?:the |this )?(?:model|context)|(?:prompt|input|message|request|conversation|messages) (?:(?:of |with )?\d+ tokens? )?(?:is |was |are )?too (?:long|large|big)|maximum (?:number of )?(?:input |context )?tokens|max(?:imum)? context|tokens? (?:\S+ ){0,2}exceeds?|(?:token|input) (?:limit|count) (?:\S+ ){0,2}(?:exceeded|exceeds|reached)|(?:exceeds?|exceeded|over) (?:the )?(?:\w+ )?(?:token|context) (?:limit|budget|window)`,
		`context`),
	lex(KindAuthFailed,
		`unauthori[sz]ed|unauthenticated|authenticat\w* (?:\w+ )?(?:fail\w*|error|required|invalid|expired|missing|needed)|(?:not|isn't|aren't|no longer) (?:logged|signed) in|(?:log|sign) ?in (?:again|required|failed|expired)|(?:invalid|expired|revoked|missing|bad|wrong|incorrect|no) (?:api |access |auth |bearer |refresh |oauth |session |personal access )?(?:key|token|credentials?)s?|(?:api|access|auth|bearer|refresh|oauth|session) (?:key|token)s? (?:\w+ ){0,3}(?:invalid|expired|revoked|missing|not (?:set|found|valid|provided)|required|rejected)|credentials? (?:\w+ ){0,3}(?:invalid|expired|missing|not found|rejected|not provided)|re ?authenticat\w*|forbidden|access denied|has disabled|disabled (?:\S+ ){0,3}access|(?:organi[sz]ation|account) (?:\S+ ){0,2}(?:verified|verification)|(?:not able|unable) to authenticate|no (?:auth|credentials?) (?:available|configured)|auth unavailable|set an auth(?:entication)? method`,
		`auth\w*|oauth|login|log in|logged|sign ?in|signed in|credentials?|api ?keys?|access tokens?|keychain|account|organi[sz]ation|identity|iam`),
	// A sandbox that could not be set up or started is the workspace's,
	// before the denials its word is also in.
	lex(KindWorkspaceSetup, `(?:set ?up|start|create|build|initiali[sz]e|launch) (?:the |a |an )?(?:\w+ )?sandbox|sandbox\S* (?:\S+ ){0,5}(?:failed to (?:start|launch|initiali[sz]e)|setup|set up)`, ``),
	lex(KindPermissionDenied,
		`permission denied|eacces|eperm|erofs|read only file ?system|operation not permitted|not (?:allowed|permitted) to (?:write|read|execute|run|access|modify|create|delete|edit|open)|sandbox\w* (?:\w+ ){0,3}(?:denied|blocked|block|prevent\w*|restrict\w*|violation|disallow\w*)|approval (?:\w+ ){0,2}(?:required|denied|rejected|never)|(?:disallowed|not allowed|forbidden) (?:tool|command)s?|(?:denied|blocked|rejected) by (?:the )?(?:\S+ )?polic\w*|(?:this |the )?(?:command|tool call|tool) (?:\S+ )?was (?:refused|rejected|blocked|denied)|not in (?:the )?allow(?:ed)? ?(?:\S+ )?list|not (?:in|on) the list of allowed (?:tools|commands)|(?:only|not) (?:\S+ ){0,4}(?:in |within )?(?:the )?allowed (?:working |workspace )?director(?:y|ies)|outside (?:of )?(?:the )?(?:allowed |working |workspace )+director(?:y|ies)`,
		`permissions?|sandbox\w*|approval|allow ?list|deny ?list|read only|write access|seatbelt|landlock|seccomp`),
	lex(KindConfigError,
		`(?:config|configuration|settings?)(?: file)? (?:\w+ ){0,3}(?:invalid|error|fail\w*|malformed|not found|missing|parse|parsing|unknown|unrecogni[sz]ed|corrupt\w*)|(?:invalid|malformed|unknown|unrecogni[sz]ed|unsupported|missing) (?:config\w*|settings?|options?|flags?|parameters?|subcommands?|schema)|(?:unknown|unrecogni[sz]ed|unexpected) (?:arguments?|args?|keys?|fields?)|(?:unknown|invalid|unsupported|deprecated|retired|decommissioned) models?|issue with the (?:selected|configured|specified) model|models? (?:\S+ ){0,8}(?:not found|may not exist|does not exist|doesn't exist|is unknown|is invalid|is not supported|not supported|deprecated|retired|decommissioned)|(?:command|executable|binary|program) not found|is not recogni[sz]ed as (?:an internal or external command|the name of a cmdlet)|not found in path|not installed|(?:json|jsonc|toml|yaml|yml|ini) (?:\S+ ){0,3}(?:invalid|error|parse|syntax|unexpected|trailing comma)|(?:parse|syntax) error|unsupported (?:protocol|version|platform|architecture|region|endpoint|scheme|archive (?:type|format)|compression (?:type|format))|incompatible|requires (?:node|python|a newer|version)|self signed|certificate (?:\S+ ){0,3}(?:verify|verification|invalid|expired|untrusted|not trusted)|unable to get (?:local )?issuer|no (?:\S+ )?(?:provider|model|endpoint|profile|base url)s? (?:is )?(?:configured|set|selected|specified)|run \S+ (?:configure|setup|init|onboard)(?: first)?|requires more (?:system |gpu |v)?(?:memory|ram|vram)|(?:free|available) (?:gpu |device )?memory (?:\S+ ){0,8}(?:is )?less than (?:\S+ ){0,3}(?:desired|required|requested)|insufficient system resources|wrong version number|(?:invalid|malformed) (?:base )?url|url (?:is )?invalid|requested entity (?:was )?not found|deployment (?:\S+ ){0,4}(?:not found|does not exist)|not found error|untrusted|not (?:inside |in |running in )?(?:a )?trusted|(?:does not|doesn't) support (?:tools|tool use|function calling)|(?:provider|harness|plugin|extension|executable|binary) (?:\S+ ){0,3}(?:not (?:registered|provided|installed|configured|found)|does not exist|is unknown)`,
		`config\w*|settings?|options?|flags?|arguments?|parameters?|setup|install\w*|endpoint|base url|version|plugin|extension|profile|environment variable|env var|schema`),
	// A connection that timed out never reached a server: before timeouts.
	lex(KindNetwork, `connect ?time ?out\w*|connect etimedout`, ``),
	// A stream that went quiet is a stall, before the timeouts its words
	// share.
	lex(KindStalled, `stream (?:\S+ ){0,2}time ?outs?|idle time ?outs?|(?:stream|response|output) (?:has )?stalled|stalled (?:stream|response)|no (?:stream )?(?:activity|events?|data|output|chunks?|tokens?) (?:\S+ ){0,2}for \d+\w*`, ``),
	lex(KindTimeout,
		`time ?outs?|timed out|deadline (?:exceeded|reached|expired)|took too long|no response (?:\w+ ){0,2}within`,
		`deadline`),
	lex(KindNetwork,
		`(?:connection|connect|socket|network|dns|proxy|host|hostname) (?:\w+ ){0,3}(?:refused|reset|closed|failed|error|unreachable|lost|aborted|dropped)|offline|unreachable|no internet|name resolution|could not resolve (?:host|hostname|address|domain|dns)|econn\w+|fetch failed|failed to fetch|error sending request|socket hang up|network error|etimedout|enotfound|eai again|econnreset|econnrefused|ehostunreach|enetunreach`,
		`connection|connect\w*|socket|network|dns|proxy|internet`),
	// The agent itself crashed or gave up on its own mistakes.
	lex(KindAgentFailed, `caught panic|panicked at|(?:application|program|process) panicked|tool not found|(?:unknown|no such) tool|failed to receive tool input|did not conform to the edit format|search ?replace blocks? failed|stuck in (?:an? )?(?:infinite |endless )?loop|tried to use (?:\S+ ){1,3}without (?:a )?value for (?:the )?required (?:parameter|argument)|panic runtime error|nil pointer dereference|segmentation fault|core dumped|unhandled (?:promise )?rejection|heap out of memory|mistake limit|too many consecutive (?:mistakes|errors|failures)|(?:potential |infinite )?loop (?:was )?detected|could not parse (?:the )?(?:llm |model )?(?:output|response)|attempt to (?:call|index|compare|concatenate|perform arithmetic on) (?:\S+ ){0,3}(?:a )?nil value|output ?parser ?exception|(?:error|failed to|could not|unable to) pars(?:e|ing) (?:the )?(?:tool|function) ?calls?|cannot read propert(?:y|ies) of (?:undefined|null)|(?:undefined|null) is not an object|is not a function|has no attribute|object is not (?:subscriptable|callable|iterable)`, ``),
	lex(KindProviderUnavailable,
		`overload\w*|(?:service|server|api|upstream|backend|model|provider) (?:is |was )?(?:currently |temporarily )?(?:unavailable|down|busy|overloaded|not responding|under maintenance)|(?:internal|upstream|gateway) (?:server )?error|server error|maintenance|outage|at capacity|no capacity|capacity (?:issue|problem|constraint)s?|high demand|temporarily unavailable|stream (?:closed|disconnected|ended|interrupted)|(?:did not|didn't) (?:provide|return) any|empty (?:response|completion|reply)|no (?:healthy )?(?:models|deployments|upstreams?) available|error occurred while processing|transient (?:\w+ ){0,2}(?:errors?|failures?|issues?)|(?:runner|model server|inference server) (?:process )?(?:has )?(?:terminated|crashed|died)|no (?:available )?channels? (?:available|left)|no available channels?`,
		`server|upstream|backend|gateway`),
}

// lexHit is what the lexicon found: the kind and the term that said it.
type lexHit struct {
	kind Kind
	term string
}

// matchLexicon returns the lexicon's reading of text, restricted to the
// kinds in allowed when it is not empty.
func matchLexicon(text string, allowed []Kind) (lexHit, bool) {
	plain := plainWords(tail(text, lexiconTail))
	if plain == "" {
		return lexHit{}, false
	}
	for _, r := range lexicon {
		if len(allowed) > 0 && !hasKind(allowed, r.kind) {
			continue
		}
		if m := r.said.FindString(plain); m != "" {
			return lexHit{kind: r.kind, term: m}, true
		}
	}
	troubles := trouble.FindAllStringIndex(plain, -1)
	if len(troubles) == 0 {
		return lexHit{}, false
	}
	for _, r := range lexicon {
		if r.about == nil || (len(allowed) > 0 && !hasKind(allowed, r.kind)) {
			continue
		}
		for _, loc := range r.about.FindAllStringIndex(plain, -1) {
			if nearTrouble(plain, loc, troubles) {
				return lexHit{kind: r.kind, term: plain[loc[0]:loc[1]]}, true
			}
		}
	}
	return lexHit{}, false
}

// nearTrouble reports whether a word of trouble lies within troubleReach
// words of the match at loc (the match itself is not its own trouble).
func nearTrouble(plain string, loc []int, troubles [][]int) bool {
	for _, t := range troubles {
		if t[0] < loc[1] && t[1] > loc[0] {
			continue
		}
		lo, hi := min(t[1], loc[0]), max(t[0], loc[1])
		if lo > hi {
			lo, hi = hi, lo
		}
		if strings.Count(plain[lo:hi], " ") <= troubleReach {
			return true
		}
	}
	return false
}

// tail is the last n bytes of s, cut at a line start where one is near.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return s
}

// plainWords is text as the lexicon reads it: escapes and colour removed,
// quoted identifiers dropped, a path made its last segment (a home
// directory's ".config" is no word about configuration, "settings.json" at
// its end is), camelCase and snake_case split into words, every character
// that is not a letter, a digit, an apostrophe, a colon or a dot made a
// space, lower case, one space between words.
func plainWords(text string) string {
	text = quotedValue.ReplaceAllString(path.ReplaceAllStringFunc(jsonEscapes.Replace(stripANSI(text)), lastSegment), "$1 $3")
	var b strings.Builder
	b.Grow(len(text))
	var prev rune
	for _, r := range text {
		switch {
		case r == '’':
			r = '\''
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == ':' || r == '.':
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteByte(' ')
		}
		prev = r
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// quotedValue is a quoted identifier (a name, a key, a path: one token, no
// space): data, not words about the failure, as the fingerprint folds
// quoted values too. "reading 'config'" is a program's property, not its
// configuration; a quoted sentence is kept (a Python repr quotes its
// messages), and a quote inside a word (can't) opens nothing.
var quotedValue = regexp.MustCompile("(^|[^\\pL\\pN])['\"`‘]([\\pL_.~/-][\\pL\\pN_.~/:-]{0,79})['\"`’]([^\\pL\\pN]|$)")

// lastSegment is the last segment of a path path matched.
func lastSegment(p string) string {
	p = strings.TrimRight(p, `/\`)
	return p[strings.LastIndexAny(p, `/\`)+1:]
}
