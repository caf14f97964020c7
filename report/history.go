package report

// HistoryRun is one run as `workforce history --json` prints it, one
// object a line (docs/history.md): the run's persona, tier, harness and
// model, its project root, how it ended and in how long (milliseconds),
// its cost in US dollars when the harness reported one (absent, never 0,
// when unknown), workforce's session id, and whether that session is
// still kept and can be resumed (workforce sessions resume).
type HistoryRun struct {
	Persona    string   `json:"persona"`
	Tier       string   `json:"tier"`
	Harness    string   `json:"harness"`
	Model      string   `json:"model"`
	Project    string   `json:"project"`
	Status     string   `json:"status"`
	DurationMS int64    `json:"durationMs"`
	CostUSD    *float64 `json:"costUsd,omitempty"`
	SessionID  string   `json:"sessionId"`
	Resumable  bool     `json:"resumable"`
}
