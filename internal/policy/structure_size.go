package policy

import (
	"regexp"
	"strconv"
)

// A rate limit's own figures can say the request never fits: OpenAI's and
// Groq's token-per-minute answers ("on tokens per minute (TPM): Limit
// 7000, Used 0, Requested 7895") name the limit and what this one request
// asked for. A request larger than the whole limit waits for nothing: no
// window will hold it, only a smaller request will (the card's size, as a
// context window). Read as numbers, not words.
var overLimitRe = regexp.MustCompile(`(?i)\bLimit:? (\d+)(?:,? Used:? \d+)?,? Requested:? (\d+)\b`)

// requestOverLimit returns the line of text whose figures show a request
// larger than its limit.
func requestOverLimit(text string) (string, bool) {
	for _, m := range overLimitRe.FindAllStringSubmatchIndex(text, -1) {
		limit, err1 := strconv.Atoi(text[m[2]:m[3]])
		asked, err2 := strconv.Atoi(text[m[4]:m[5]])
		if err1 == nil && err2 == nil && limit > 0 && asked > limit {
			return lineAt(text, m[0]), true
		}
	}
	return "", false
}
