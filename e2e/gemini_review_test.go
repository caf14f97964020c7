//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

// TestGeminiUntrustedProject runs `workforce run` with the real gemini in
// a project the user has not trusted (no GEMINI_CLI_TRUST_WORKSPACE, no
// trusted folders file), the repository carrying what would change
// gemini's behaviour if it applied: a .env naming a system prompt file
// and trusting the workspace, a .gemini/settings.json excluding a tool,
// and a GEMINI.md importing a file outside the repository. The run goes
// on unattended (--skip-trust, with advanced.ignoreLocalEnv, since
// --skip-trust alone loads the whole .env: measured), the persona's
// instructions extend the repository's, and none of the repository's
// settings, nor the outside file, reach the model; the user's home is
// left as it was. A .gemini/.env, which gemini loads under --skip-trust
// whatever its settings say, makes workforce refuse the run.
func TestGeminiUntrustedProject(t *testing.T) {
	for _, envFile := range []string{".env", filepath.Join(".gemini", ".env")} {
		t.Run(envFile, func(t *testing.T) { geminiUntrustedProject(t, envFile) })
	}
}

func geminiUntrustedProject(t *testing.T, envFile string) {
	dir, s, e := oneShotProject(t, "gemini", "unused", "{}", step{Text: "done"})
	var vars []string
	for _, kv := range e.vars {
		if !strings.HasPrefix(kv, "GEMINI_CLI_TRUST_WORKSPACE=") {
			vars = append(vars, kv)
		}
	}
	e.vars = vars
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	const secret, envSystem = "OUTSIDE SECRET of the e2e user", "SYSTEM PROMPT from the repository's .env"
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte(secret+"\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "system.md"), []byte(envSystem+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte(geminiRepoMarker+"\n@"+filepath.Join(outside, "secret.md")+"\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(dir, envFile), []byte("GEMINI_CLI_TRUST_WORKSPACE=true\nGEMINI_SYSTEM_MD="+filepath.Join(outside, "system.md")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gemini", "settings.json"), []byte(`{"tools": {"exclude": ["glob"]}}`), 0o644)
	pdir := filepath.Join(e.home, ".agentworkforce", "workforce", "personas")
	os.MkdirAll(pdir, 0o755)
	spec := fmt.Sprintf(`{"id": "ext", "intent": "test", "description": "e2e gemini extend",
 "agentsMdContent": %q, "agentsMdMode": "extend", "permissions": {"mode": "acceptEdits"},
 "tiers": {"best": {"harness": "gemini", "model": %q}}}`, geminiTextMarker+"\n", geminiModel)
	os.WriteFile(filepath.Join(pdir, "ext.json"), []byte(spec), 0o644)
	os.WriteFile(filepath.Join(e.home, ".gemini", "oauth_creds.json"), []byte(`{"access_token": "a", "refresh_token": "r", "expiry_date": 1}`), 0o600)
	os.WriteFile(filepath.Join(e.home, ".gemini", "google_accounts.json"), []byte(`{"active": "user@example.com", "old": []}`), 0o600)
	before := homeSnapshot(t, e.home)

	if envFile != ".env" {
		// gemini loads a .gemini/.env under --skip-trust whatever its
		// settings say: workforce refuses the run, naming the file.
		cmd := exec.Command(workforce, "run", "ext", "review", "--json")
		cmd.Dir, cmd.Env = dir, e.vars
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), filepath.Join(dir, envFile)) || len(s.requests()) > 0 {
			t.Errorf("%v, %d requests; want the run refused naming %s:\n%s", err, len(s.requests()), envFile, out)
		}
		return
	}
	res, code, stderr := runWorkforceJSON(t, e, dir, "ext", "review")
	if res.Status != report.Status("succeeded") || code != 0 {
		t.Fatalf("status %q, exit %d; want succeeded, 0\nstderr:\n%s", res.Status, code, stderr)
	}
	body := firstMain(t, s, stderr)
	all := strings.Join(stringsOf(mustJSON(t, body)), "\n")
	if !strings.Contains(all, geminiTextMarker) || !strings.Contains(all, geminiRepoMarker) {
		t.Errorf("extend mode: want the persona's and the repository's instructions in the request:\n%s", all)
	}
	if strings.Contains(all, secret) {
		t.Errorf("the file outside the repository reached the model through an @import")
	}
	if strings.Contains(all, envSystem) {
		t.Errorf("the repository's .env replaced the system prompt of an untrusted project")
	}
	if got := s.toolNames(s.mainRequests()[0]); !slices.Contains(got, "glob") {
		t.Errorf("the untrusted repository's .gemini/settings.json applied (glob excluded): %v", got)
	}
	if diff := diffSnapshots(before, homeSnapshot(t, e.home)); len(diff) > 0 {
		t.Errorf("the user's home changed: %v", diff)
	}
}

// TestGeminiHTTPErrorWorkforce: a model that answers 400 ends the run
// failed, the API's error summarised in the result's message (its
// control characters escaped); gemini's error report goes into the
// session's tmp, not the temporary directory of the user.
func TestGeminiHTTPErrorWorkforce(t *testing.T) {
	dir, _, e := geminiRunProject(t, `{"mode": "acceptEdits"}`, "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"code":400,"message":"workforce e2e: a bad \u001b[31mrequest","status":"INVALID_ARGUMENT"}}`)
	}))
	t.Cleanup(srv.Close)
	userTmp := t.TempDir()
	e.vars = append(e.vars, "GOOGLE_GEMINI_BASE_URL="+srv.URL, "TMPDIR="+userTmp)
	res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file")
	if res.Status != report.Status("failed") || code == 0 {
		t.Errorf("status %q, exit %d; want failed\nstderr:\n%s", res.Status, code, stderr)
	}
	if strings.Contains(stderr, "\x1b") || strings.Contains(res.Message, "\x1b") {
		t.Errorf("an escape of the model's error printed raw: stderr %q, message %q", stderr, res.Message)
	}
	if want := `API error 400 INVALID_ARGUMENT: workforce e2e: a bad \033[31mrequest`; res.Message != want {
		t.Errorf("message %q, want %q", res.Message, want)
	}
	entries, _ := os.ReadDir(userTmp)
	for _, d := range entries {
		t.Errorf("the run wrote %s into the user's temporary directory", d.Name())
	}
}
