package gemini

import (
	"testing"

	"github.com/drover-dev/drover/internal/agent/internal/fixtures"
)

// FuzzGeminiParser: any stdout and stderr is parsed without panicking
// (fixtures.Fuzz; seeds are the captured fixtures and the committed corpus
// under testdata/fuzz).
func FuzzGeminiParser(f *testing.F) {
	fixtures.Fuzz(f, "testdata", func() fixtures.Parser { return NewParser() })
}
