package board

// Changes is what one attempt did to its card's git branch
// (workspace.git): recorded on the run as changes, given to the next
// attempt's prompt as the changes variable. gitwork.Changes is this type.
type Changes struct {
	Branch     string   `json:"branch"`
	Base       string   `json:"base"`    // the commit the attempt started from
	Head       string   `json:"head"`    // the branch's commit after it
	Commits    []string `json:"commits"` // commits added, oldest first
	Files      int      `json:"files"`   // files changed between Base and Head
	Insertions int      `json:"insertions"`
	Deletions  int      `json:"deletions"`
	// Dirty: the tree held changes nobody committed when the attempt
	// ended (after drover's own commit, only what could not be committed).
	Dirty bool `json:"dirty"`
	// CommittedBy names drover's commit when drover made one ("" otherwise).
	CommittedBy string `json:"committed_by,omitempty"`
	// Pushed is the commit drover pushed to the branch after the attempt
	// passed ("" when it did not push).
	Pushed string `json:"pushed,omitempty"`
	// BaseBranch is the branch the card's branch was made from
	// (workspace.git.base or the remote's default), which its pull request
	// targets; set with Pushed.
	BaseBranch string `json:"base_branch,omitempty"`
}

// Changed says whether the attempt left anything on its branch.
func (c Changes) Changed() bool { return len(c.Commits) > 0 || c.Dirty }
