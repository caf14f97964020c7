package report

// Installed is one persona an install or an import landed: its file and
// assets, and the persona of the same id below it that it is laid over
// (Overrides, with the fields it Inherits) or hides (Shadows).
type Installed struct {
	ID        string   `json:"id"`
	File      string   `json:"file"`
	Assets    []string `json:"assets"`
	Overrides *Origin  `json:"overrides,omitempty"`
	Inherits  []string `json:"inherits,omitempty"`
	Shadows   *Origin  `json:"shadows,omitempty"`
}

// Install is what `workforce install --json` prints.
type Install struct {
	Target    string      `json:"target"`
	Installed []Installed `json:"installed"`
}

// Outdated is one source of a layer's lock file, as `workforce outdated
// --json` prints it: what it resolved to then and now, and why it moved.
type Outdated struct {
	Source   string `json:"source"`
	Locked   string `json:"locked"`
	Current  string `json:"current"`
	Outdated bool   `json:"outdated"`
	Why      string `json:"why,omitempty"`
}

// Imported is one agent file `workforce import` made a persona.
type Imported struct {
	ID        string   `json:"id"`
	Harness   string   `json:"harness"`
	Source    string   `json:"source"`
	File      string   `json:"file,omitempty"`
	Overrides *Origin  `json:"overrides,omitempty"`
	Inherits  []string `json:"inherits,omitempty"`
	Shadows   *Origin  `json:"shadows,omitempty"`
}

// Exported is one agent file `workforce export` writes.
type Exported struct {
	Persona string    `json:"persona"`
	Tier    string    `json:"tier"`
	Harness string    `json:"harness"`
	Agent   string    `json:"agent"`
	File    string    `json:"file"`
	Dropped []Dropped `json:"dropped"`
	// Content is the file's text; a dry run only.
	Content string `json:"content,omitempty"`
}

// Dropped is a persona value an agent file cannot say. Its JSON names are
// capitalised, as export has always printed them.
type Dropped struct {
	Field string `json:"Field"`
	Value string `json:"Value"`
	Why   string `json:"Why"`
}
