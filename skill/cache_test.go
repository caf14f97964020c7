package skill

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/persona"
)

// fakeFetcher writes a skill named name with description desc into the
// work directory, as an installer would, counting its calls.
type fakeFetcher struct {
	calls atomic.Int32
	desc  atomic.Value // string
	fail  atomic.Bool
	delay time.Duration
}

func (f *fakeFetcher) fetch(ctx context.Context, src persona.SkillSource, work string, env []string) (*fetched, error) {
	f.calls.Add(1)
	time.Sleep(f.delay)
	if f.fail.Load() {
		return nil, errors.New("npm error network request failed")
	}
	desc, _ := f.desc.Load().(string)
	if desc == "" {
		desc = "first"
	}
	name := src.Name
	if name == "" {
		name = "probe" // a source that does not tell
	}
	dir := filepath.Join(work, ".agents/skills", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	md := "---\nname: " + name + "\ndescription: " + desc + "\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		return nil, err
	}
	return &fetched{dir: dir, version: "1.0.0"}, nil
}

func newTestCache(t *testing.T) (*Cache, *fakeFetcher) {
	f := &fakeFetcher{}
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache", "skills"), fetch: f.fetch}
	return c, f
}

const source = "npm:@acme/review@1.0.0"

func mustSource(t *testing.T, s string) persona.SkillSource {
	t.Helper()
	src, err := persona.ParseSkillSource(s)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestCacheGet(t *testing.T) {
	c, f := newTestCache(t)
	src := mustSource(t, source)
	ctx := context.Background()
	if _, _, ok := c.Lookup(source, src); ok {
		t.Fatal("an empty cache holds the source")
	}
	content, meta, fetched, err := c.Get(ctx, source, src, false)
	if err != nil || !fetched || content.Description != "first" || meta.Version != "1.0.0" || meta.Name != "review" {
		t.Fatalf("first Get = %+v, %+v, fetched %v, %v", content, meta, fetched, err)
	}
	if m, dir, ok := c.Lookup(source, src); !ok || m.Source != source || filepath.Base(dir) != Key(source, src) {
		t.Errorf("Lookup after Get = %+v, %s, %v", m, dir, ok)
	}
	// Offline: the cache answers.
	f.fail.Store(true)
	content, _, fetched, err = c.Get(ctx, source, src, false)
	if err != nil || fetched || content.Description != "first" || f.calls.Load() != 1 {
		t.Fatalf("cached Get = %+v, fetched %v, %v; %d fetches", content, fetched, err, f.calls.Load())
	}
	// A refresh that fails names the source and keeps the entry.
	_, _, _, err = c.Get(ctx, source, src, true)
	if err == nil || !strings.Contains(err.Error(), "cannot fetch skill "+source+": npm error network request failed") {
		t.Errorf("failed refresh = %v", err)
	}
	if content, _, _, err := c.Get(ctx, source, src, false); err != nil || content.Description != "first" {
		t.Errorf("after a failed refresh the cache holds %+v, %v", content, err)
	}
	// A refresh that works replaces it.
	f.fail.Store(false)
	f.desc.Store("second")
	if content, _, fetched, err := c.Get(ctx, source, src, true); err != nil || !fetched || content.Description != "second" {
		t.Errorf("refresh = %+v, %v, %v", content, fetched, err)
	}
	if content, _, _, _ := c.Get(ctx, source, src, false); content.Description != "second" {
		t.Errorf("after a refresh the cache holds %q", content.Description)
	}
	// Nothing is left beside the entries.
	entries, _ := os.ReadDir(c.Dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".staging") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// A damaged entry is fetched again.
	must(t, os.Remove(filepath.Join(c.Dir, Key(source, src), "skill", "SKILL.md")))
	before := f.calls.Load()
	if _, _, fetched, err := c.Get(ctx, source, src, false); err != nil || !fetched || f.calls.Load() != before+1 {
		t.Errorf("Get of a damaged entry = fetched %v, %v", fetched, err)
	}
}

// TestCacheConcurrent: runs asking for one source at once fetch it once
// and all get it.
func TestCacheConcurrent(t *testing.T) {
	c, f := newTestCache(t)
	f.delay = 50 * time.Millisecond
	src := mustSource(t, source)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			content, _, _, err := c.Get(context.Background(), source, src, false)
			if err == nil && content.Name != "review" {
				err = errors.New("wrong skill " + content.Name)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

func TestKey(t *testing.T) {
	a := Key(source, mustSource(t, source))
	if !strings.HasPrefix(a, "review-") || a != Key(source, mustSource(t, source)) {
		t.Errorf("Key = %q, want a stable key starting with the name", a)
	}
	other := "npm:@acme/review@2.0.0"
	if Key(other, mustSource(t, other)) == a {
		t.Error("two versions share a key")
	}
	gh := "https://github.com/acme/x/tree/main/skills/Odd.Name"
	if k := Key(gh, mustSource(t, gh)); !strings.HasPrefix(k, "skills-sh-") {
		t.Errorf("Key of an odd name = %q", k)
	}
}

func TestFindSkill(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string // relative; "" for an error
	}{
		{name: "skills.sh layout", files: []string{".agents/skills/find/SKILL.md", "skills-lock.json"}, want: ".agents/skills/find"},
		{name: "prpm layout", files: []string{".claude/skills/find/SKILL.md"}, want: ".claude/skills/find"},
		{name: ".agents first", files: []string{"x/find/SKILL.md", ".claude/skills/find/SKILL.md", ".agents/skills/find/SKILL.md"}, want: ".agents/skills/find"},
		{name: "the only one, another name", files: []string{".claude/skills/other/SKILL.md"}, want: ".claude/skills/other"},
		{name: "node_modules left out", files: []string{"node_modules/p/find/SKILL.md"}},
		{name: "none", files: []string{"README.md"}},
		{name: "several, none named", files: []string{"a/SKILL.md", "b/SKILL.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
			}
			got, err := findSkill(dir, "find")
			if tt.want == "" {
				if err == nil || !errors.Is(err, errNoSkill) {
					t.Errorf("findSkill = %s, %v; want an error", got, err)
				}
				return
			}
			if err != nil || got != filepath.Join(dir, tt.want) {
				t.Errorf("findSkill = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
