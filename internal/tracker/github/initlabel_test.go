package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/config"
	"github.com/drover-dev/drover/internal/store"
	fake "github.com/drover-dev/drover/internal/testkit/faketracker/github"
	"github.com/drover-dev/drover/internal/tracker/trackertest"
)

// TestInitConfigTakesOnlyLabelledIssues: the tracker section drover init
// --tracker github writes, pointed at the fake, mirrors the issues carrying
// the label init's next steps name and leaves the repository's other open
// issues alone (init used to write required_labels: [], which took them all).
func TestInitConfigTakesOnlyLabelledIssues(t *testing.T) {
	gh := fake.New("acme", "app")
	gh.Token = "test-token"
	t.Cleanup(gh.Close)
	t.Setenv("GITHUB_TOKEN", "test-token")
	src, err := config.InitTemplateFor("github")
	if err != nil {
		t.Fatal(err)
	}
	src = strings.Replace(src, "repo: owner/name", "repo: acme/app", 1)
	src = strings.Replace(src, "# endpoint: https://api.github.com", "endpoint: "+gh.URL, 1)
	cfg, err := config.Parse([]byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{World: trackertest.Attach(t, kit, ghFake{gh}, cfg), gh: gh}
	w.issue("an unrelated open issue", `{}`)
	n := w.issue("for the agent", `{}`, "drover")
	w.SyncOK()
	cards, _ := w.Store.ListCards(context.Background(), store.CardFilter{Tracked: true})
	if len(cards) != 1 || cards[0].ID != w.card(n).ID {
		t.Fatalf("the init config mirrored %d cards, want only the issue labelled drover: %+v", len(cards), cards)
	}
}
