package report

// ContextFile is one instruction file of `workforce context --json`.
type ContextFile struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Scope     string `json:"scope"`
	// Content is the text the file contributes (after trimming rules and
	// the byte budget).
	Content string `json:"content"`
}

// Context is what `workforce context --json` prints.
type Context struct {
	Harness string `json:"harness"`
	// Version is the installed harness's version, when the profile was
	// chosen by it.
	Version  string        `json:"version,omitempty"`
	Profile  string        `json:"profile"`
	Dir      string        `json:"dir"`
	Root     string        `json:"root"`
	Files    []ContextFile `json:"files"`
	Dropped  []ContextFile `json:"dropped,omitempty"`
	Problems []string      `json:"problems,omitempty"`
	Text     string        `json:"text"`
}

// ResolvedFile is one AGENTS.md file `context resolve` reports, "new" or
// "changed".
type ResolvedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Resolution is what `context resolve --json` prints.
type Resolution struct {
	Files []ResolvedFile `json:"files"`
	// Remaining counts files that apply but were left for the next call.
	Remaining int `json:"remaining"`
}

// Resume is what `context resume --json` prints: each of Cwd, Root and
// Markers is the pair then, now (empty strings when unchanged), and the
// instruction files changed, removed and added.
type Resume struct {
	Cwd     [2]string `json:"cwd,omitempty"`
	Root    [2]string `json:"root,omitempty"`
	Markers [2]string `json:"markers,omitempty"`
	Changed []string  `json:"changed,omitempty"`
	Removed []string  `json:"removed,omitempty"`
	Added   []string  `json:"added,omitempty"`
}

// HarnessStatus is one harness of `workforce harness check --json`.
type HarnessStatus struct {
	Harness   string `json:"harness"`
	Installed bool   `json:"installed"`
	Path      string `json:"path,omitempty"`
	Version   string `json:"version,omitempty"`
	Package   string `json:"package"`
	// Profile is the discovery profile of the installed version;
	// ProfileNote says when that version was not measured.
	Profile     string `json:"profile,omitempty"`
	ProfileNote string `json:"profileNote,omitempty"`
}

// Harnesses is what `workforce harness check --json` prints.
type Harnesses struct {
	Harnesses []HarnessStatus `json:"harnesses"`
}
