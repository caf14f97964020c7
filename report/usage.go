package report

import "time"

// UsageReport is what `workforce usage --json` prints (docs/usage.md):
// the usage of the runs of the history, grouped by By.
type UsageReport struct {
	// Since is the start of the period; absent for the whole history.
	Since  *time.Time   `json:"since,omitempty"`
	By     string       `json:"by"`
	Groups []UsageGroup `json:"groups"`
	Total  UsageSums    `json:"total"`
}

// UsageGroup is the usage of the runs of one key; Key is "" for the runs
// of which it is not known (the model of a run that names none).
type UsageGroup struct {
	Key string `json:"key"`
	UsageSums
}

// UsageSums are the usage of some runs.
type UsageSums struct {
	// Runs counts the runs; FromHistory and FromSessionRecords those
	// whose usage came from each, Unknown those whose usage is unknown.
	Runs               int `json:"runs"`
	FromHistory        int `json:"fromHistory"`
	FromSessionRecords int `json:"fromSessionRecords"`
	Unknown            int `json:"unknown"`
	// The sums of the figures known.
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	// CostUSD is the sum of the known costs, absent when no run's cost
	// is known; CostUnknown counts the runs whose cost is unknown (their
	// usage unknown, or recorded without a cost); CostEstimated says a
	// harness estimated a part of it for a model it has no price for.
	CostUSD       *float64 `json:"costUsd,omitempty"`
	CostUnknown   int      `json:"costUnknown"`
	CostEstimated bool     `json:"costEstimated,omitempty"`
}
