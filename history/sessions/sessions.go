// Package sessions reads the harnesses' own records of their
// conversations and returns what each consumed: tokens, cost when the
// harness records one, models, working directory and time. workforce
// usage reads it for the runs whose usage the history does not carry
// (interactive runs), matching the records to workforce's sessions by
// the harness's session id or by the sandbox directory they ran in.
//
// Where each harness keeps them, as measured on claude 2.1.330, codex
// 0.169.0, opencode 1.18.33 and gemini 0.61.0 against the scripted model of the e2e
// tests (e2e/usage_test.go, which also makes the fixtures in testdata/):
//
//   - claude: <config>/projects/<dir>/<session id>.jsonl ($CLAUDE_CONFIG_DIR,
//     else ~/.claude), one JSON object a line. An assistant line carries
//     message.id, message.model and message.usage (input_tokens, the
//     cache's cache_read_input_tokens and cache_creation_input_tokens
//     apart, output_tokens); a message of several content blocks is
//     written once a block, each line repeating the message's usage, so
//     usage is counted once a message id. A cost-state line closes each
//     run: totalCostUSD, hasUnknownModelCost when claude priced a model
//     it does not know at a default price, and startTime. A resumed
//     conversation appends to the same file, and claude restores its
//     cost state: the resumed run's cost-state has the first run's
//     startTime and the conversation's total so far. So the cost is the
//     last cost-state's total of each startTime, summed (a conversation
//     whose cost state was not restored counts each part once). Lines
//     carry sessionId, cwd and timestamp. Subagents' conversations are
//     in <dir>/<session id>/subagents/, read the same way (not measured:
//     the scripted model starts no subagent).
//   - codex: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl
//     (and archived_sessions/), one JSON object a line: session_meta
//     first (payload.id, payload.cwd), turn_context lines naming the
//     model, and event_msg lines of payload.type token_count whose
//     info.total_token_usage is the conversation's running total
//     (input_tokens, the cache's cached_input_tokens among them,
//     output_tokens); a resumed conversation appends to the same file
//     and its total goes on from where it was. The last total is the
//     conversation's. codex records no cost.
//   - opencode: a SQLite database, $XDG_DATA_HOME/opencode/opencode.db
//     (else ~/.local/share/opencode), left in WAL mode with the recent
//     writes in opencode.db-wal. Its table session holds a row a
//     conversation with its totals (tokens_input without the cache,
//     tokens_cache_read, tokens_cache_write, tokens_output,
//     tokens_reasoning, cost), directory, model (JSON: id, providerID)
//     and time_created, time_updated (Unix milliseconds). opencode
//     records a cost of 0 for a model it has no price for (the e2e
//     model), so its 0 is a recorded figure, kept as it is. SQLite
//     (github.com/ncruces/go-sqlite3, pure Go) reads a copy of the
//     database and its WAL made in a temporary directory: opened where
//     they are, a connection would lock them, write their -shm and
//     checkpoint the WAL into the database when it closes. opencode's
//     own CLI was measured too: `opencode export ID` prints a session's
//     tokens and cost but takes 2.7 s a session, `opencode session list`
//     has no usage, `opencode stats` only the sum of all.
//   - gemini: <gemini home>/.gemini/tmp/<project>/chats/session-<time>-<id
//     prefix>.jsonl ($GEMINI_CLI_HOME, else ~), <project> a short name of
//     the directory gemini ran in (its base name), whose .project_root
//     holds the directory's path. The first line is the metadata
//     (sessionId, projectHash, startTime, lastUpdated); then messages (id,
//     timestamp, type user or gemini), each model message with model and
//     tokens (input: the prompt's, the cached ones among them; cached;
//     output: the answer's; thoughts and tool apart), a message written
//     again under the same id when its tool calls come; and updates
//     ({"$set": {...}}: lastUpdated, sessionId, or the whole list of
//     messages) and rewinds ({"$rewindTo": id}). A resumed run rewrites
//     the list into the conversation's file and appends to it (measured:
//     a resume in another minute also started a file of its own, holding
//     the first message only). So the files of a session id are one
//     conversation, each model message counted once by its id, with the
//     tokens of its last version (a message a rewind took out was
//     consumed all the same, and counts). The output is the answer's
//     tokens without the thoughts, as gemini's one-shot stats count it. A
//     subagent's conversation is in chats/<parent session id>/<id>.jsonl
//     and counts in its parent's (not measured: the scripted model starts
//     no subagent). gemini records no cost; its one-shot stats after
//     --resume are the run's own. Only session-*.jsonl files are read.
//
// Token counts are those of report.Usage: Input counts every input
// token, those read from and written to the cache included; CacheRead
// and CacheWrite are parts of it. A cost the harness does not record is
// nil, never 0.
//
// Damage is skipped and counted (Result.Skipped): a line that is not
// JSON, a row that cannot be read; a file or database that cannot be
// read at all is an error of Result.Errors, the others are still read.
// Files are streamed a line at a time (a line over maxLine is skipped),
// and only those modified at or after Options.Since (or ModifiedSince)
// are opened.
package sessions

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/convstore"
)

// The harnesses, as workforce names them.
const (
	Claude   = "claude"
	Codex    = "codex"
	Opencode = "opencode"
	Gemini   = "gemini"
)

// maxTokens bounds a token count read: a larger one is damage (and
// sums of them cannot overflow).
const maxTokens = 1 << 40

// validCounts reports whether each of counts is in [0, maxTokens].
func validCounts(counts ...int64) bool {
	for _, n := range counts {
		if n < 0 || n > maxTokens {
			return false
		}
	}
	return true
}

// Tokens are the tokens a conversation consumed.
type Tokens struct {
	// Input counts every input token; CacheRead and CacheWrite are the
	// parts of it read from and written to the model's cache.
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Add adds u to t.
func (t *Tokens) Add(u Tokens) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
}

// Record is one conversation of a harness, as its own records tell it.
type Record struct {
	Harness string `json:"harness"`
	// SessionID is the harness's id of the conversation (claude's
	// session id, codex's thread id, opencode's and gemini's session id).
	SessionID string `json:"sessionId"`
	// Dir is the working directory the conversation ran in; "" when the
	// records do not say.
	Dir string `json:"dir,omitempty"`
	// Models are the models that answered, in the order first seen.
	Models []string `json:"models"`
	Tokens Tokens   `json:"tokens"`
	// CostUSD is the cost the harness recorded, in US dollars; nil when
	// it recorded none (codex always; claude for a conversation that
	// never finished a run).
	CostUSD *float64 `json:"costUsd,omitempty"`
	// CostEstimated says the harness priced a model it had no price for
	// at a default one (claude's hasUnknownModelCost).
	CostEstimated bool `json:"costEstimated,omitempty"`
	// Start and End are the times of the first and the last thing
	// recorded; zero when the records say no time.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Source is the file the record was read from.
	Source string `json:"source"`
}

// Store is where a harness keeps its conversations: claude's
// configuration directory, codex's home, opencode's data directory (the
// opencode directory below XDG_DATA_HOME), gemini's .gemini directory.
type Store struct {
	Harness string
	Dir     string
}

// Stores returns the stores of the harnesses as an environment locates
// them (getenv reads a variable; "" is unset), by the table of
// internal/convstore: CLAUDE_CONFIG_DIR else ~/.claude, CODEX_HOME else
// ~/.codex, $XDG_DATA_HOME/opencode else ~/.local/share/opencode,
// $GEMINI_CLI_HOME/.gemini else ~/.gemini. A relative directory, or a
// store under an unknown home, is left out.
func Stores(getenv func(string) string) []Store {
	var out []Store
	for _, l := range convstore.Locations() {
		if d := l.Dir(getenv); d != "" {
			out = append(out, Store{l.Harness, d})
		}
	}
	return out
}

// Options select the records Read returns.
type Options struct {
	// Since, when not zero, leaves out conversations whose last record
	// is older, and does not read the files not modified since.
	Since time.Time
	// ModifiedSince, when not zero, does not read the files not
	// modified since, whatever the times their records say: the files
	// of a conversation that went on after a time were written after
	// it.
	ModifiedSince time.Time
	// Dir, when not "", keeps only the conversations that ran in Dir or
	// below it.
	Dir string
}

// Result is what Read found.
type Result struct {
	// Records are the conversations, by start time.
	Records []Record
	// Skipped counts the lines and rows that could not be read.
	Skipped int
	// Errors are the files and stores that could not be read at all.
	Errors []error
}

// Read reads the conversations of stores. A store that does not exist
// holds none; one that cannot be read is an error of the result, and the
// others are still read. The same conversation found in two stores is
// kept once, from the one that recorded it last.
func Read(stores []Store, o Options) Result {
	var res Result
	modified := o.Since
	if o.ModifiedSince.After(modified) {
		modified = o.ModifiedSince
	}
	for _, s := range stores {
		var recs []Record
		switch s.Harness {
		case Claude:
			recs = readClaude(s.Dir, modified, &res)
		case Codex:
			recs = readCodex(s.Dir, modified, &res)
		case Opencode:
			recs = readOpencode(s.Dir, modified, &res)
		case Gemini:
			recs = readGemini(s.Dir, modified, &res)
		default:
			res.Errors = append(res.Errors, errors.New("unknown harness "+s.Harness))
		}
		for _, r := range recs {
			if !o.Since.IsZero() && !r.End.IsZero() && r.End.Before(o.Since) {
				continue
			}
			if o.Dir != "" && !Within(r.Dir, o.Dir) {
				continue
			}
			res.Records = append(res.Records, r)
		}
	}
	res.Records = dedupe(res.Records)
	slices.SortStableFunc(res.Records, func(a, b Record) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Harness+a.SessionID, b.Harness+b.SessionID)
	})
	return res
}

// dedupe keeps one record of each harness's conversation: the one that
// ends last.
func dedupe(recs []Record) []Record {
	at := map[[2]string]int{}
	out := recs[:0]
	for _, r := range recs {
		k := [2]string{r.Harness, r.SessionID}
		if i, ok := at[k]; ok {
			if r.End.After(out[i].End) {
				out[i] = r
			}
			continue
		}
		at[k] = len(out)
		out = append(out, r)
	}
	return out
}

// Within reports whether path is dir or below it, both absolute and
// cleaned the same way.
func Within(path, dir string) bool {
	if path == "" || dir == "" {
		return false
	}
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// modifiedSince reports whether the file of info was modified at or
// after since (always, when since is zero).
func modifiedSince(info fs.FileInfo, since time.Time) bool {
	return since.IsZero() || !info.ModTime().Before(since)
}

// notExist reports whether err says a file is absent: a store that does
// not exist holds no conversation.
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
