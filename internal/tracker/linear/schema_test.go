package linear

import (
	"os"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// TestQueriesMatchLinearSchema validates every document drover sends
// against Linear's published schema (linear/linear,
// packages/sdk/src/schema.graphql, MIT): field names, arguments, filter
// input types and variable types. The schema is 1.7 MB and changes often,
// so it is not kept here: point DROVER_LINEAR_SCHEMA at a copy to run it.
func TestQueriesMatchLinearSchema(t *testing.T) {
	path := os.Getenv("DROVER_LINEAR_SCHEMA")
	if path == "" {
		t.Skip("DROVER_LINEAR_SCHEMA is not set (a copy of linear/linear's packages/sdk/src/schema.graphql)")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: path, Input: string(src)})
	if gerr != nil {
		t.Fatalf("loading the schema: %v", gerr)
	}
	for name, doc := range map[string]string{"project": qProject, "candidates": qCandidates, "by ids": qByIDs,
		"comments": qComments, "move": mMove, "comment": mComment} {
		if _, errs := gqlparser.LoadQueryWithRules(schema, doc, rules.NewDefaultRules()); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
	}
}
