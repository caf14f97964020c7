//go:build e2e

// A scripted loopback model: scripted answers each harness's model requests
// with tool calls and text given in advance, so that the real harness acts
// (reads, writes) and the requests it sends back can be inspected.
//
// What was measured with claude 2.1.330, opencode 1.18.33 and codex 0.169.0
// (TestScriptedModel):
//
// Endpoints. claude: POST /v1/messages, streaming, every conversation
// request offers tools; with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC unset
// it first sends HEAD /api/hello. opencode: POST /v1/chat/completions,
// streaming; the first request is the title request, without tools ("You
// are a title generator..."), then the conversation requests with tools.
// codex: POST /v1/responses, streaming, no other request. gemini (0.61.0):
// POST /v1beta/models/MODEL:streamGenerateContent?alt=sse for the
// conversation (tools as functionDeclarations), and, without -m, side
// requests to :generateContent with a responseJsonSchema (its model
// router); see gemini_test.go.
//
// Tools. claude offers Agent Bash Edit ListAgents Read ReportFindings
// ScheduleWakeup Skill ToolSearch Workflow DeferredToolPlaceholder Write;
// Read takes file_path (absolute; offset, limit, pages optional), Write
// file_path and content, Edit file_path, old_string, new_string
// (replace_all). opencode offers bash edit glob grep read skill task
// todowrite webfetch write; read takes filePath (absolute; offset, limit),
// write filePath and content. codex with model gpt-5.5 offers exec_command
// write_stdin request_user_input apply_patch view_image get_goal create_goal
// update_goal tool_search web_search: exec_command is a function taking cmd
// (a shell command line; workdir, tty, login... optional), apply_patch a
// freeform ("custom", lark grammar) tool whose input is the patch text
// ("*** Begin Patch\n*** Add File: out.txt\n+line\n*** End Patch\n").
// With an unknown model name (newEnv's mock-model) codex falls back to
// default metadata and offers no apply_patch: exec_command write_stdin
// request_user_input view_image multi_agent_v1 get_goal create_goal
// update_goal web_search.
//
// Permissions. claude -p as root refuses --permission-mode
// bypassPermissions and --dangerously-skip-permissions ("cannot be used
// with root/sudo privileges for security reasons") unless IS_SANDBOX=1;
// --permission-mode acceptEdits --allowedTools Read,Write works.
// opencode run writes with "permission": {"edit": "allow", "bash": "allow"}
// in its config. codex exec writes with
// --dangerously-bypass-approvals-and-sandbox.
//
// Lazy loading of nested instruction files, with the harness started at
// the repository root and src/billing/invoice.go read in step 1:
//   - claude loads src/billing/CLAUDE.md when its Read tool reads a file
//     next to it: absent from the first request; in the request after the
//     read (and every later one), the user message holding the
//     tool_result (messages[3]) gets a second content block,
//     messages[3].content[1].text =
//     "<system-reminder>\nContents of <repo>/src/billing/CLAUDE.md:\n\nbilling claude rules\n\n</system-reminder>".
//   - opencode loads src/billing/AGENTS.md when its read tool reads a file
//     next to it: absent from the first conversation request (and from its
//     system prompt); in the request after the read (and later), the tool
//     message's content (messages[3].content, role "tool") ends, after the
//     file's "<content>...</content>", with
//     "\n\n<system-reminder>\nInstructions from: <repo>/src/billing/AGENTS.md\nbilling agents rules\n\n</system-reminder>".
//   - codex never sends src/billing/AGENTS.md: neither at start nor after
//     `cat src/billing/invoice.go` through exec_command (the
//     function_call_output carries only the command's output).

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one scripted answer: either a tool call or final text.
type step struct {
	Tool string // the harness's own tool name
	// Args is the tool's input; for a freeform (custom) tool, Args["input"]
	// is its raw text. "{{cwd}}" in a string value stands for the working
	// directory the harness told the model.
	Args map[string]any
	Text string // final assistant text when Tool == ""
	// Usage is the usage the answer reports; nil reports one input and
	// one output token.
	Usage *modelUsage
}

// modelUsage is the usage an answer reports: input tokens (the cached
// ones included for chat completions and Responses, which count them in
// the input; apart for Anthropic, which reports them apart), output
// tokens, and the tokens read from and written to the cache.
type modelUsage struct {
	Input, Output, CacheRead, CacheWrite int
}

// usageOf is the usage st reports.
func usageOf(st step) modelUsage {
	if st.Usage == nil {
		return modelUsage{Input: 1, Output: 1}
	}
	return *st.Usage
}

// scripted is a loopback model that answers each main conversation request
// with the next scripted step and records every request body.
type scripted struct {
	mu     sync.Mutex
	steps  []step
	next   int          // the next step to answer with
	paths  []string     // "METHOD /path" of each request
	bodies [][]byte     // each request body
	main   []int        // the indices of the main conversation requests
	usages []modelUsage // the usage each answer reported
	cwd    string       // the working directory the harness told the model
	// followCwd takes the working directory from every main request
	// that names one, not only the first: runs one after the other, each
	// in a sandbox of its own (a queue worker's tasks).
	followCwd bool
}

func newScripted(steps ...step) *scripted { return &scripted{steps: steps} }

// requests returns the raw request bodies, in order.
func (s *scripted) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

func appendStrings(out []string, v any) []string {
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = appendStrings(out, e)
		}
	case map[string]any:
		for _, e := range x {
			out = appendStrings(out, e)
		}
	}
	return out
}

// toolNames returns the names of the tools offered in request i.
func (s *scripted) toolNames(i int) []string {
	reqs := s.requests()
	if i < 0 || i >= len(reqs) {
		return nil
	}
	var body struct{ Tools []map[string]any }
	json.Unmarshal(reqs[i], &body)
	var names []string
	for _, t := range body.Tools {
		if fds, ok := t["functionDeclarations"].([]any); ok {
			// The Gemini API: one tool object holding the functions.
			for _, fd := range fds {
				if m, ok := fd.(map[string]any); ok {
					names = append(names, toolName(m))
				}
			}
			continue
		}
		names = append(names, toolName(t))
	}
	return names
}

// toolName is a tool's name in any of the three request formats: Anthropic
// and Responses tools carry it at the top level, chat completions tools
// under "function", and built-in Responses tools only have a type.
func toolName(t map[string]any) string {
	if n, ok := t["name"].(string); ok {
		return n
	}
	if f, ok := t["function"].(map[string]any); ok {
		if n, ok := f["name"].(string); ok {
			return n
		}
	}
	n, _ := t["type"].(string)
	return n
}

// endpoints returns "METHOD /path" of each request, in order.
func (s *scripted) endpoints() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// mainRequests returns the indices of the main conversation requests, the
// ones answered with steps, in order.
func (s *scripted) mainRequests() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.main...)
}

// ServeHTTP answers by URL path: /messages (Anthropic, claude),
// /chat/completions (opencode), /responses (codex), :streamGenerateContent
// and :generateContent (the Gemini API, gemini). Anything else, such as
// count_tokens or a model list, gets a harmless JSON answer.
func (s *scripted) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var in struct {
		Model  string
		Stream bool
		Tools  []map[string]any
	}
	json.Unmarshal(body, &in)
	path := req.URL.Path
	conversation := strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/chat/completions") ||
		strings.HasSuffix(path, "/responses") || strings.HasSuffix(path, ":streamGenerateContent")
	n, st := s.record(req.Method+" "+path, body, conversation && len(in.Tools) > 0)
	switch {
	case strings.Contains(path, ":"):
		writeGemini(w, path, body, st, n) // gemini_test.go
	case strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 1})
	case strings.HasSuffix(path, "/messages"):
		writeAnthropic(w, in.Model, in.Stream, st, n)
	case strings.HasSuffix(path, "/chat/completions"):
		writeChat(w, in.Model, in.Stream, st, n)
	case strings.HasSuffix(path, "/responses"):
		writeResponses(w, in.Tools, st, n)
	case strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		writeJSON(w, map[string]any{})
	}
}

// record keeps a request and returns its index and its answer: the next
// step for a main conversation request (one that offers tools), "done"
// once the steps have run out, and plain text for side requests such as
// titles or quota checks.
func (s *scripted) record(path string, body []byte, main bool) (int, step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.bodies)
	s.paths = append(s.paths, path)
	s.bodies = append(s.bodies, body)
	st := s.answer(main)
	s.usages = append(s.usages, usageOf(st))
	return n, st
}

// reported returns the usage each answer reported, in order.
func (s *scripted) reported() []modelUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]modelUsage(nil), s.usages...)
}

// answer returns the answer to the request just recorded (record).
func (s *scripted) answer(main bool) step {
	n := len(s.bodies) - 1
	body := s.bodies[n]
	if !main {
		return step{Text: "ok"}
	}
	s.main = append(s.main, n)
	if s.cwd == "" {
		s.cwd = cwdIn(body)
	} else if cwd := cwdIn(body); s.followCwd && cwd != "" {
		s.cwd = cwd
	}
	if s.next >= len(s.steps) {
		return step{Text: "done"}
	}
	st := s.steps[s.next]
	s.next++
	if st.Args != nil {
		args := make(map[string]any, len(st.Args))
		for k, v := range st.Args {
			if str, ok := v.(string); ok {
				v = strings.ReplaceAll(str, "{{cwd}}", s.cwd)
			}
			args[k] = v
		}
		st.Args = args
	}
	return st
}

// cwdPattern finds the working directory each harness tells the model:
// claude's "Primary working directory: D", opencode's "Working directory:
// D", codex's "<cwd>D</cwd>", gemini's first "Workspace Directories:" entry.
var cwdPattern = regexp.MustCompile(`(?:Primary working directory|Working directory): (\S+)|<cwd>([^<]+)</cwd>|\*\*Workspace Directories:\*\*\n\s+- (\S+)`)

// cwdIn returns the working directory a request tells the model, or "".
func cwdIn(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, str := range appendStrings(nil, v) {
		if m := cwdPattern.FindStringSubmatch(str); m != nil {
			return m[1] + m[2] + m[3]
		}
	}
	return ""
}

// workdir returns the working directory the harness told the model in its
// first main request: "{{cwd}}" in a step's arguments stands for it.
func (s *scripted) workdir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; an empty event name writes a bare data
// line.
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (e sse) send(event string, data any) {
	b, ok := data.([]byte)
	if !ok {
		b, _ = json.Marshal(data)
	}
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func argsJSON(st step) string {
	b, _ := json.Marshal(st.Args)
	if st.Args == nil {
		b = []byte("{}")
	}
	return string(b)
}

// writeAnthropic answers a Messages API request. A step with both a tool
// and text answers with a text block before the tool_use block, as a
// model that says what it is about to do.
func writeAnthropic(w http.ResponseWriter, model string, stream bool, st step, n int) {
	id := fmt.Sprintf("msg_e2e_%d", n)
	u := usageOf(st)
	usage := map[string]any{"input_tokens": u.Input, "output_tokens": u.Output, "cache_creation_input_tokens": u.CacheWrite, "cache_read_input_tokens": u.CacheRead}
	var blocks []map[string]any
	stop := "end_turn"
	if st.Text != "" || st.Tool == "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": st.Text})
	}
	if st.Tool != "" {
		block := map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_e2e_%d", n), "name": st.Tool, "input": st.Args}
		if st.Args == nil {
			block["input"] = map[string]any{}
		}
		blocks = append(blocks, block)
		stop = "tool_use"
	}
	if !stream {
		content := make([]any, len(blocks))
		for i, b := range blocks {
			content[i] = b
		}
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, block := range blocks {
		if block["type"] == "tool_use" {
			start := map[string]any{"type": "tool_use", "id": block["id"], "name": st.Tool, "input": map[string]any{}}
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(st)}})
		} else {
			e.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": st.Text}})
		}
		e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": u.Output}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// writeChat answers an OpenAI chat completions request.
func writeChat(w http.ResponseWriter, model string, stream bool, st step, n int) {
	id := fmt.Sprintf("chatcmpl-e2e-%d", n)
	created := time.Now().Unix()
	u := usageOf(st)
	usage := map[string]any{"prompt_tokens": u.Input, "completion_tokens": u.Output, "total_tokens": u.Input + u.Output}
	if u.CacheRead != 0 {
		usage["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CacheRead}
	}
	msg := map[string]any{"role": "assistant", "content": st.Text}
	finish := "stop"
	if st.Tool != "" {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": fmt.Sprintf("call_e2e_%d", n), "type": "function",
			"function": map[string]any{"name": st.Tool, "arguments": argsJSON(st)}}}}
		finish = "tool_calls"
	}
	if !stream {
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	e := newSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	e.send("", chunk(msg, nil, nil))
	e.send("", chunk(map[string]any{}, finish, usage))
	e.send("", []byte("[DONE]"))
}

// writeResponses answers an OpenAI Responses API request. A call to a tool
// the request offers as "custom" (freeform, such as codex's apply_patch)
// becomes a custom_tool_call whose input is Args["input"].
func writeResponses(w http.ResponseWriter, tools []map[string]any, st step, n int) {
	id := fmt.Sprintf("resp_e2e_%d", n)
	var item map[string]any
	switch {
	case st.Tool == "":
		item = map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_e2e_%d", n), "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": st.Text, "annotations": []any{}}}}
	case toolType(tools, st.Tool) == "tool_search":
		// codex's client-side search over its deferred tools (MCP tools);
		// codex answers with a tool_search_output in the next request.
		item = map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("tsc_e2e_%d", n), "status": "completed",
			"call_id": fmt.Sprintf("call_e2e_%d", n), "execution": "client", "arguments": st.Args}
	case isCustom(tools, st.Tool):
		input, _ := st.Args["input"].(string)
		item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_e2e_%d", n), "status": "completed",
			"call_id": fmt.Sprintf("call_e2e_%d", n), "name": st.Tool, "input": input}
	default:
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_e2e_%d", n), "status": "completed",
			"call_id": fmt.Sprintf("call_e2e_%d", n), "name": st.Tool, "arguments": argsJSON(st)}
	}
	e := newSSE(w)
	e.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	if st.Tool == "" {
		// The AI SDK (opencode's openai provider) needs a text part
		// started before it is done.
		added := map[string]any{"type": "message", "role": "assistant", "id": item["id"], "status": "in_progress", "content": []any{}}
		e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added})
		e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"],
			"output_index": 0, "content_index": 0, "delta": st.Text})
	}
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "usage": responsesUsage(usageOf(st))}})
}

// responsesUsage is u as the Responses API reports it; without cached
// tokens its details are null, as before usage could be set.
func responsesUsage(u modelUsage) map[string]any {
	var details any
	if u.CacheRead != 0 {
		details = map[string]any{"cached_tokens": u.CacheRead}
	}
	return map[string]any{"input_tokens": u.Input, "input_tokens_details": details,
		"output_tokens": u.Output, "output_tokens_details": nil, "total_tokens": u.Input + u.Output}
}

func isCustom(tools []map[string]any, name string) bool { return toolType(tools, name) == "custom" }

// toolType returns the type of the offered tool name ("function",
// "custom", "tool_search", ...), or "".
func toolType(tools []map[string]any, name string) string {
	for _, t := range tools {
		if toolName(t) == name {
			s, _ := t["type"].(string)
			return s
		}
	}
	return ""
}

// scriptedEnv is an isolated environment for one harness run against a
// scripted model.
type scriptedEnv struct {
	home string
	s    *scripted
	vars []string
}

// newScriptedEnv mirrors newEnv with the scripted model as the server, and
// lets each harness write files without asking (opencode through its
// config, claude and codex through their arguments). opencode's provider
// openai is the scripted model too, for the built-in personas'
// openai/gpt-5-mini and openai/gpt-5-nano: opencode 1.18.33 talks to a
// provider named openai with the Responses API (it fails with
// @ai-sdk/openai-compatible: "Z.responses is not a function"). Codex gets a model
// name it knows, gpt-5.5: with an unknown one such as newEnv's mock-model it
// falls back to metadata that offers no apply_patch tool.
func newScriptedEnv(t *testing.T, s *scripted) *scriptedEnv {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o755)
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, srv.URL)), 0o644)
	oc := filepath.Join(home, "opencode-e2e.json")
	os.WriteFile(oc, []byte(fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "mock",
    "options": {"baseURL": "%[1]s/v1", "apiKey": "e2e"}, "models": {"m": {"name": "m"}}},
    "openai": {"npm": "@ai-sdk/openai", "name": "openai",
    "options": {"baseURL": "%[1]s/v1", "apiKey": "e2e"}, "models": {"gpt-5-mini": {"name": "gpt-5-mini"}, "gpt-5-nano": {"name": "gpt-5-nano"}}}},
  "model": "mock/m", "autoupdate": false, "share": "disabled",
  "permission": {"edit": "allow", "bash": "allow"}
}`, srv.URL)), 0o644)
	return &scriptedEnv{home: home, s: s, vars: append([]string{
		"HOME=" + home,
		"PATH=" + binDir + ":" + os.Getenv("PATH"),
		"CODEX_HOME=" + codexHome,
		"OPENAI_API_KEY=e2e",
		"OPENCODE_CONFIG=" + oc,
		"XDG_CACHE_HOME=" + filepath.Join(cacheDir, "xdg-cache"),
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_API_KEY=e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"TERM=dumb",
	}, geminiVars(t, home, srv.URL)...)}
}

// run runs a harness in dir and returns its combined output.
func (e *scriptedEnv) run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = e.vars
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s timed out:\n%s", strings.Join(argv, " "), out.String())
	}
	if err != nil {
		t.Logf("%s: %v", strings.Join(argv, " "), err)
	}
	return out.String()
}

// found is where a JSON string holding some text sits in a request body.
type found struct {
	path, text string
}

// locate returns the JSON path and value of every string in body that
// contains needle.
func locate(body []byte, needle string) []found {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	var out []found
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, needle) {
				out = append(out, found{path, x})
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		}
	}
	walk("", v)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// excerpt returns s, or the part of it around needle when s is long.
func excerpt(s, needle string) string {
	const width = 700
	if len(s) <= 2*width {
		return s
	}
	i := strings.Index(s, needle)
	lo, hi := max(0, i-width), min(len(s), i+len(needle)+width)
	return "…" + s[lo:hi] + "…"
}

const (
	invoiceMarker = "InvoiceTotal sums the e2e invoice lines"
	written       = "written by the model\n"
	readPrompt    = "Read src/billing/invoice.go, then write out.txt."
)

// scriptedCases drive each harness through a read, a write and a final
// answer with its own tools. nested is the nested instruction file and its
// text, whose lazy loading the test reports.
var scriptedCases = []struct {
	harness      string
	args         []string
	nested, text string
	steps        func(dir string) []step
}{
	{
		harness: "claude",
		// As root, claude 2.1.330 refuses bypassPermissions and
		// --dangerously-skip-permissions (unless IS_SANDBOX=1), so edits
		// are accepted and the two tools allowed. --allowedTools takes
		// several values: the prompt goes before it.
		args:   []string{"-p", readPrompt, "--permission-mode", "acceptEdits", "--allowedTools", "Read,Write"},
		nested: "src/billing/CLAUDE.md", text: "billing claude rules",
		steps: func(dir string) []step {
			return []step{
				{Tool: "Read", Args: map[string]any{"file_path": filepath.Join(dir, "src/billing/invoice.go")}},
				{Tool: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "out.txt"), "content": written}},
				{Text: "finished"},
			}
		},
	},
	{
		harness: "opencode",
		args:    []string{"run", readPrompt},
		nested:  "src/billing/AGENTS.md", text: "billing agents rules",
		steps: func(dir string) []step {
			return []step{
				{Tool: "read", Args: map[string]any{"filePath": filepath.Join(dir, "src/billing/invoice.go")}},
				{Tool: "write", Args: map[string]any{"filePath": filepath.Join(dir, "out.txt"), "content": written}},
				{Text: "finished"},
			}
		},
	},
	{
		harness: "codex",
		args:    []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", readPrompt},
		nested:  "src/billing/AGENTS.md", text: "billing agents rules",
		steps: func(dir string) []step {
			return []step{
				{Tool: "exec_command", Args: map[string]any{"cmd": "cat src/billing/invoice.go"}},
				{Tool: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: out.txt\n+" + written + "*** End Patch\n"}},
				{Text: "finished"},
			}
		},
	},
}

// TestScriptedModel shows the scripted model drives each real harness: it
// reads a file and writes another with the harness's own tools. It also
// reports whether the harness sent the nested instruction file next to the
// file it read, and where.
func TestScriptedModel(t *testing.T) {
	for _, c := range scriptedCases {
		t.Run(c.harness, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			os.MkdirAll(filepath.Join(dir, "src/billing"), 0o755)
			os.WriteFile(filepath.Join(dir, "src/billing/invoice.go"), []byte("package billing\n\n// "+invoiceMarker+".\nfunc InvoiceTotal(lines []int) (n int) {\n\tfor _, l := range lines {\n\t\tn += l\n\t}\n\treturn n\n}\n"), 0o644)
			os.WriteFile(filepath.Join(dir, c.nested), []byte(c.text+"\n"), 0o644)

			s := newScripted(c.steps(dir)...)
			e := newScriptedEnv(t, s)
			start := time.Now()
			out := e.run(t, dir, append([]string{filepath.Join(binDir, c.harness)}, c.args...)...)
			t.Logf("%s ran in %v", c.harness, time.Since(start).Round(time.Millisecond))
			main := s.mainRequests()
			for i, p := range s.endpoints() {
				t.Logf("request %d: %s, main=%v, tools=%v", i, p, slices.Contains(main, i), s.toolNames(i))
			}

			got, err := os.ReadFile(filepath.Join(dir, "out.txt"))
			if err != nil || string(got) != written {
				t.Errorf("out.txt = %q, %v; want %q\nharness output:\n%s", got, err, written, out)
			}
			if len(main) < 3 {
				t.Fatalf("%d main requests, want at least 3 (read, write, final)\nharness output:\n%s", len(main), out)
			}
			reqs := s.requests()
			if locate(reqs[main[1]], invoiceMarker) == nil {
				t.Errorf("the request after the read (%d) does not carry invoice.go's text", main[1])
			}
			for k, i := range main {
				fs := locate(reqs[i], c.text)
				if len(fs) == 0 {
					t.Logf("main request %d (request %d): no %q", k, i, c.text)
				}
				for _, f := range fs {
					t.Logf("main request %d (request %d): %q at %s:\n%s", k, i, c.text, f.path, excerpt(f.text, c.text))
				}
			}
		})
	}
}
