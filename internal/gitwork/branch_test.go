package gitwork

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/drover-dev/drover/internal/board"
)

var hostileTitles = []string{
	"Fix the login page", "", "   ", "../../etc/passwd", "-rf --force", "a..b", "x.lock", "main.lock/x.lock",
	"refs/heads/main", "@{upstream}", "@", "tab\there", "new\nline", "nul\x00byte", "ctrl\x1b[31m", "~^:?*[\\",
	"Ünïcödé façade – “quotes”", "日本語のタイトル", "emoji 🚀🔥", strings.Repeat("long title ", 80),
	"/leading/and/trailing/", "...dots...", "$(rm -rf /)", "`id`", "a//b", "trailing.", ".hidden",
	strings.Repeat("é", 300), "HEAD", "-",
}

func TestBranchNameOfHostileTitlesIsOneGitAccepts(t *testing.T) {
	for _, title := range hostileTitles {
		card := board.Card{ID: "c-1", Identifier: "DRV-7", Title: title}
		name, err := BranchName("", card)
		if err != nil {
			t.Fatalf("BranchName(%q): %v", title, err)
		}
		if !ValidBranch(name) || !strings.HasPrefix(name, "drover/") || len(name) > maxBranch {
			t.Errorf("BranchName(%q) = %q", title, name)
		}
		out, err := exec.Command("git", "check-ref-format", "--branch", name).CombinedOutput()
		if err != nil {
			t.Errorf("git check-ref-format --branch %q: %v %s", name, err, out)
		}
	}
	if got, _ := BranchName("", board.Card{Identifier: "DRV-7", Title: "Fix the Login page"}); got != "drover/drv-7-fix-the-login-page" {
		t.Errorf("the default name: %q", got)
	}
	if got, _ := BranchName("feature/{{ card.identifier }}", board.Card{Identifier: "ENG-12"}); got != "feature/eng-12" {
		t.Errorf("a template of the operator's: %q", got)
	}
	if got, _ := BranchName("{{ card.title }}", board.Card{ID: "c9", Identifier: "DRV-9", Title: "日本語"}); got != "drover/drv-9-c9" {
		t.Errorf("a title with nothing ASCII left: %q", got)
	}
	if _, err := BranchName("{{ card.missing }}", board.Card{}); err == nil || !strings.Contains(err.Error(), "workspace.git.branch") {
		t.Errorf("an unknown variable: %v", err)
	}
}

func TestValidBranchRejectsWhatGitRejects(t *testing.T) {
	for _, name := range []string{"a..b", "-x", "a/", "a//b", "a.lock", ".a", "a b", "a~", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a@{b", "a.", "x\x7f"} {
		if ValidBranch(name) {
			t.Errorf("ValidBranch(%q) is true", name)
		}
		if err := exec.Command("git", "check-ref-format", "--branch", name).Run(); err == nil {
			t.Errorf("git accepts %q, which the test says it rejects", name)
		}
	}
}

func FuzzBranchName(f *testing.F) {
	for _, s := range hostileTitles {
		f.Add(s, "DRV-1")
	}
	f.Fuzz(func(t *testing.T, title, ident string) {
		name, err := BranchName("", board.Card{ID: "id", Identifier: ident, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		if !ValidBranch(name) || len(name) > maxBranch || strings.ContainsAny(name, " \t\n") {
			t.Fatalf("BranchName(%q, %q) = %q", title, ident, name)
		}
		for _, p := range strings.Split(name, "/") {
			if p == ".." || p == "." || p == "" {
				t.Fatalf("BranchName(%q) = %q has part %q", title, name, p)
			}
		}
	})
}
