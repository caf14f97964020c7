package native

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
)

// importFile reads the agent file path as workforce import does and returns
// the persona it makes, loaded as the loader loads a persona file.
func importFile(t *testing.T, path, harness string) (*persona.Persona, *Agent) {
	t.Helper()
	src, err := Find(path, harness)
	if err != nil {
		t.Fatal(err)
	}
	if len(src) != 1 {
		t.Fatalf("Find(%s) = %v", path, src)
	}
	a, err := src[0].Read()
	if err != nil {
		t.Fatal(err)
	}
	data, err := MarshalPersona(a.Spec())
	if err != nil {
		t.Fatal(err)
	}
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer([]persona.File{{Name: a.Name + ".json", Data: data}})})
	if len(cat.Errors) > 0 {
		t.Fatalf("%s makes an invalid persona: %v\n%s", path, cat.Errors[0], data)
	}
	p, ok := cat.Get(a.Name)
	if !ok {
		t.Fatalf("persona %s not loaded", a.Name)
	}
	return p, a
}

// TestRoundTrip: every agent file in testdata, imported and exported
// again, is the same file byte for byte.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.*")
	if len(files) < 6 {
		t.Fatalf("testdata holds %d agent files", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			h := filepath.Base(filepath.Dir(f))
			p, a := importFile(t, f, h)
			r, err := p.Resolve("")
			if err != nil {
				t.Fatal(err)
			}
			out, err := Export(p.Spec.Description, r, h, a.Name)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(f)
			if !bytes.Equal(out.Data, want) {
				t.Errorf("exported:\n%s\nwant:\n%s", out.Data, want)
			}
		})
	}
}

// TestBuiltinsRoundTrip: every tier of every built-in persona, exported
// for each harness and imported again, keeps every value the harness's
// file can say: description, prompt, model (as the harness names it),
// reasoning, the sidecar text and mode of the harness's channel, the
// permission rules (compared by what the harness gets from them), MCP
// servers where the file holds them, and codex's own settings on codex.
func TestBuiltinsRoundTrip(t *testing.T) {
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(personas.Files)})
	if len(cat.Errors) > 0 {
		t.Fatal(cat.Errors[0])
	}
	n := 0
	for _, id := range cat.IDs() {
		p, _ := cat.Get(id)
		for _, tier := range p.Spec.TierNames() {
			r, err := p.Resolve(tier)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range Formats {
				t.Run(id+"@"+tier+"/"+h, func(t *testing.T) {
					n++
					f, err := Export(p.Spec.Description, r, h, id)
					if err != nil {
						t.Fatal(err)
					}
					dir := t.TempDir()
					path := filepath.Join(dir, f.Name)
					if err := os.WriteFile(path, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
					back, _ := importFile(t, path, h)
					r2, err := back.Resolve("")
					if err != nil {
						t.Fatal(err)
					}
					compareRoundTrip(t, h, r, r2)
				})
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d exports checked", n)
	}
}

func compareRoundTrip(t *testing.T, h string, want, got *persona.Resolved) {
	t.Helper()
	eq := func(field string, g, w any) {
		t.Helper()
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: got %#v, want %#v", field, g, w)
		}
	}
	eq("systemPrompt", strings.TrimSpace(got.SystemPrompt), strings.TrimSpace(want.SystemPrompt))
	model, gotModel := want.Model, got.Model
	switch {
	case want.Harness != h:
		model = ModelInherit // a tier of another harness: the target's own model
	case h == persona.HarnessClaude:
		model = strings.TrimPrefix(model, "anthropic/")
	case h == persona.HarnessCodex:
		model = strings.TrimPrefix(model, "openai/")
	case h == persona.HarnessOpencode:
		// opencode's models are provider/model (harness.OpencodeAgent adds
		// the provider).
		model, gotModel = withoutProvider(model), withoutProvider(gotModel)
	}
	eq("model", gotModel, model)
	eq("harnessSettings.reasoning", got.HarnessSettings.Reasoning, want.HarnessSettings.Reasoning)
	c := persona.ChannelFor(h)
	ws, gs := want.Sidecar(c), got.Sidecar(c)
	wt, _ := ws.Text()
	gt, _ := gs.Text()
	eq(string(c)+" text", strings.TrimSpace(gt), strings.TrimSpace(wt))
	if ws.IsSet() {
		eq(string(c)+"Mode", gs.Mode, ws.Mode)
	}
	switch h {
	case persona.HarnessClaude:
		eq("permissions.mode", got.Permissions.Mode, want.Permissions.Mode)
		var deny []string
		for _, d := range want.Permissions.Deny {
			if bareTool().MatchString(d) {
				deny = append(deny, d)
			}
		}
		eq("permissions.deny", got.Permissions.Deny, deny)
		eq("mcpServers", got.MCPServers, want.MCPServers)
		// The skills by name: in the persona's skills when their
		// directories are beside the agents directory, else as written.
		var wantNames, gotNames []string
		for _, sk := range want.Skills {
			wantNames = append(wantNames, sk.ID)
		}
		for _, sk := range got.Skills {
			gotNames = append(gotNames, sk.ID)
		}
		if raw, ok := restValueRaw(got.Native.For(h), "skills"); ok {
			json.Unmarshal(raw, &gotNames)
		}
		eq("skills", gotNames, wantNames)
	case persona.HarnessOpencode:
		w := *want
		w.ID, w.Harness, got.ID = "x", persona.HarnessOpencode, "x"
		wa, _, err := harness.OpencodeAgent(&w)
		if err != nil {
			t.Fatal(err)
		}
		ga, _, err := harness.OpencodeAgent(got)
		if err != nil {
			t.Fatal(err)
		}
		eq("opencode permission", string(compact(ga["permission"])), string(compact(wa["permission"])))
	case persona.HarnessCodex:
		eq("harnessSettings.sandboxMode", got.HarnessSettings.SandboxMode, want.HarnessSettings.SandboxMode)
		eq("harnessSettings.approvalPolicy", got.HarnessSettings.ApprovalPolicy, want.HarnessSettings.ApprovalPolicy)
		eq("mcpServers", got.MCPServers, want.MCPServers)
	}
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.Bytes()
}

func withoutProvider(model string) string {
	if _, after, ok := strings.Cut(model, "/"); ok {
		return after
	}
	return model
}

// TestRoundTripOverBuiltin: an agent file named as a built-in persona
// (code-reviewer) imports as a persona that shadows the built-in whole, so
// that, laid over the built-in layer as a user installs it, it exports to
// the same file byte for byte, and that file imports to the same persona
// file. Laid over the built-in without "inherit": false, the built-in's
// fields leak into the export.
func TestRoundTripOverBuiltin(t *testing.T) {
	const id = "code-reviewer"
	files, _ := filepath.Glob("testdata/*/*.*")
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			h := filepath.Base(filepath.Dir(f))
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
			switch h {
			case persona.HarnessClaude:
				data = bytes.Replace(data, []byte("\nname: "+name+"\n"), []byte("\nname: "+id+"\n"), 1)
			case persona.HarnessCodex:
				data = bytes.Replace(data, []byte("name = '"+name+"'\n"), []byte("name = '"+id+"'\n"), 1)
			}
			dir := t.TempDir()
			agent := filepath.Join(dir, id+filepath.Ext(f))
			if err := os.WriteFile(agent, data, 0o644); err != nil {
				t.Fatal(err)
			}
			imported := func(path string) []byte {
				t.Helper()
				src, err := Find(path, h)
				if err != nil || len(src) != 1 {
					t.Fatalf("Find(%s) = %v, %v", path, src, err)
				}
				a, err := src[0].Read()
				if err != nil {
					t.Fatal(err)
				}
				if a.Name != id {
					t.Fatalf("%s names agent %q, want %s", path, a.Name, id)
				}
				out, err := MarshalPersona(a.Spec())
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			pj := imported(agent)
			if !bytes.Contains(pj, []byte(`"inherit": false`)) {
				t.Fatalf("the imported persona does not say \"inherit\": false:\n%s", pj)
			}
			export := func(pj []byte) (*persona.Persona, []byte, error) {
				t.Helper()
				layer := t.TempDir()
				if err := os.WriteFile(filepath.Join(layer, id+".json"), pj, 0o644); err != nil {
					t.Fatal(err)
				}
				cat := persona.LoadLayers([]persona.Layer{{Name: persona.LayerUser, Dir: layer}, persona.BuiltinLayer(personas.Files)})
				if len(cat.Errors) > 0 {
					t.Fatalf("%v\n%s", cat.Errors[0], pj)
				}
				p, _ := cat.Get(id)
				r, err := p.Resolve("")
				if err != nil {
					t.Fatal(err)
				}
				out, err := Export(p.Spec.Description, r, h, id)
				if err != nil {
					return p, nil, err
				}
				return p, out.Data, nil
			}
			p, out, err := export(pj)
			if err != nil {
				t.Fatal(err)
			}
			if p.Layer != persona.LayerUser || p.Shadows == nil || p.Shadows.Layer != persona.LayerBuiltin || len(p.Chain) != 1 {
				t.Errorf("persona from %s, chain %v, shadows %v: want the user file alone, over the built-in", p.Layer, p.Chain, p.Shadows)
			}
			if !bytes.Equal(out, data) {
				t.Errorf("exported:\n%s\nwant:\n%s", out, data)
			}
			back := filepath.Join(t.TempDir(), filepath.Base(agent))
			if err := os.WriteFile(back, out, 0o644); err != nil {
				t.Fatal(err)
			}
			if again := imported(back); !bytes.Equal(again, pj) {
				t.Errorf("imported again:\n%s\nwant:\n%s", again, pj)
			}
			// The control: inheriting, the built-in shows through.
			// (or cannot be exported: the built-in's reasoning and a
			// native key of the file collide).
			if _, leaky, err := export(bytes.Replace(pj, []byte(`  "inherit": false,`+"\n"), nil, 1)); err == nil && bytes.Equal(leaky, data) {
				t.Errorf("an inheriting persona exports the same file: the test cannot tell")
			}
		})
	}
}
