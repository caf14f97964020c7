//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
)

// mcpEnv, set in its environment, makes the test binary an MCP server on
// its standard streams instead of running the tests: the server the
// personas of the mapping tests give each harness.
const mcpEnv = "WORKFORCE_E2E_MCP"

// mcpTools are the tools the e2e MCP server offers.
var mcpTools = []string{"ping", "pong"}

// serveMCP answers MCP requests (JSON-RPC 2.0, a message a line) on stdin
// until it closes: initialize, tools/list, tools/call and ping.
func serveMCP() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil || msg.Method == "" {
			continue // a notification, or an answer to nothing we asked
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			v := msg.Params.ProtocolVersion
			if v == "" {
				v = "2025-06-18"
			}
			reply["result"] = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "e2e", "version": "1.0.0"}}
		case "tools/list":
			var tools []any
			for _, n := range mcpTools {
				tools = append(tools, map[string]any{"name": n, "description": "The e2e MCP server's " + n + " tool.",
					"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}})
			}
			reply["result"] = map[string]any{"tools": tools}
		case "tools/call":
			reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}
		case "ping":
			reply["result"] = map[string]any{}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found: " + msg.Method}
		}
		out.Encode(reply)
	}
}
