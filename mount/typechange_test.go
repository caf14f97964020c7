package mount

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// TestSyncTypeChanges: a file, a directory or a link the agent put
// something else in the place of (a type change) syncs by the rules of
// other changes: the removal part only with Deletes (else it is reported
// unapplied, and what takes its place Blocked), a conflict only where the
// user changed the path or something below a directory being replaced,
// no link followed, a link the agent made never made; a dry run says what
// the sync does; a sync after it finds nothing left, or, when deletions
// were left, applies them with Deletes without a conflict.
func TestSyncTypeChanges(t *testing.T) {
	files := map[string]string{"f": "f", "d/x": "x", "d/y": "y", "keep.txt": "keep"}
	rmAll := func(t *testing.T, tree, rel string) { must(t, os.RemoveAll(filepath.Join(tree, rel))) }
	link := func(t *testing.T, target, p string) { must(t, os.Symlink(target, p)) }
	const dirRow = "d---------" // as snapshot has it
	type want struct {
		created, deleted, unapplied, blocked, conflicts, notSynced []string
		// gone are the real entries removed; made the real entries
		// made or changed, as snapshot describes them.
		gone []string
		made map[string]string
	}
	tests := []struct {
		name    string
		agent   func(t *testing.T, tree string)
		user    func(t *testing.T, root string)
		deletes bool
		want    want
	}{
		{
			name: "file to directory",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				write(t, filepath.Join(tree, "f/a"), "a")
			},
			want: want{unapplied: []string{"f"}, blocked: []string{"f/a"}},
		},
		{
			name: "file to directory, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				write(t, filepath.Join(tree, "f/a"), "a")
			},
			deletes: true,
			want: want{created: []string{"f/a"}, deleted: []string{"f"},
				made: map[string]string{"f": dirRow, "f/a": `file -rw-r--r-- "a"`}},
		},
		{
			name: "file to directory, the file changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				write(t, filepath.Join(tree, "f/a"), "a")
			},
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "f"), "the user's") },
			deletes: true,
			want:    want{conflicts: []string{"f", "f/a"}},
		},
		{
			name: "directory to file",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				write(t, filepath.Join(tree, "d"), "d")
			},
			want: want{unapplied: []string{"d/x", "d/y"}, blocked: []string{"d"}},
		},
		{
			name: "directory to file, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				write(t, filepath.Join(tree, "d"), "d")
			},
			deletes: true,
			want: want{created: []string{"d"}, deleted: []string{"d/x", "d/y"},
				gone: []string{"d/x", "d/y"}, made: map[string]string{"d": `file -rw-r--r-- "d"`}},
		},
		{
			name: "directory to file, a file added below by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				write(t, filepath.Join(tree, "d"), "d")
			},
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "d/new"), "the user's") },
			deletes: true,
			want:    want{deleted: []string{"d/x", "d/y"}, conflicts: []string{"d"}, gone: []string{"d/x", "d/y"}},
		},
		{
			name: "directory to file, a file below changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				write(t, filepath.Join(tree, "d"), "d")
			},
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "d/x"), "the user's") },
			deletes: true,
			want:    want{deleted: []string{"d/y"}, conflicts: []string{"d", "d/x"}, gone: []string{"d/y"}},
		},
		{
			name: "link to directory",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l/a"), "a")
			},
			want: want{unapplied: []string{"l"}, blocked: []string{"l/a"}},
		},
		{
			name: "link to directory, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l/a"), "a")
			},
			deletes: true,
			want: want{created: []string{"l/a"}, deleted: []string{"l"},
				made: map[string]string{"l": dirRow, "l/a": `file -rw-r--r-- "a"`}},
		},
		{
			name: "link to directory, the link changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l/a"), "a")
			},
			user: func(t *testing.T, root string) {
				rmAll(t, root, "l")
				link(t, filepath.Join(filepath.Dir(root), "outside"), filepath.Join(root, "l"))
			},
			deletes: true,
			want:    want{conflicts: []string{"l", "l/a"}},
		},
		{
			name: "link to file",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l"), "l")
			},
			want: want{unapplied: []string{"l"}, blocked: []string{"l"}},
		},
		{
			name: "link to file, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l"), "l")
			},
			deletes: true,
			want: want{created: []string{"l"}, deleted: []string{"l"},
				made: map[string]string{"l": `file -rw-r--r-- "l"`}},
		},
		{
			name: "link to file, the link changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "l")
				write(t, filepath.Join(tree, "l"), "l")
			},
			user: func(t *testing.T, root string) {
				rmAll(t, root, "l")
				link(t, filepath.Join(filepath.Dir(root), "outside", "o"), filepath.Join(root, "l"))
			},
			deletes: true,
			want:    want{conflicts: []string{"l"}},
		},
		{
			name: "directory to link",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				link(t, "keep.txt", filepath.Join(tree, "d"))
			},
			want: want{unapplied: []string{"d/x", "d/y"}, notSynced: []string{"d"}},
		},
		{
			name: "directory to link, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				link(t, "keep.txt", filepath.Join(tree, "d"))
			},
			deletes: true,
			want:    want{deleted: []string{"d/x", "d/y"}, notSynced: []string{"d"}, gone: []string{"d", "d/x", "d/y"}},
		},
		{
			name: "directory to link, a file below changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "d")
				link(t, "keep.txt", filepath.Join(tree, "d"))
			},
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "d/x"), "the user's") },
			deletes: true,
			want:    want{deleted: []string{"d/y"}, conflicts: []string{"d/x"}, notSynced: []string{"d"}, gone: []string{"d/y"}},
		},
		{
			name: "file to link",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				link(t, "keep.txt", filepath.Join(tree, "f"))
			},
			want: want{unapplied: []string{"f"}, notSynced: []string{"f"}},
		},
		{
			name: "file to link, deletions applied",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				link(t, "keep.txt", filepath.Join(tree, "f"))
			},
			deletes: true,
			want:    want{deleted: []string{"f"}, notSynced: []string{"f"}, gone: []string{"f"}},
		},
		{
			name: "file to link, the file changed by the user",
			agent: func(t *testing.T, tree string) {
				rmAll(t, tree, "f")
				link(t, "keep.txt", filepath.Join(tree, "f"))
			},
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "f"), "the user's") },
			deletes: true,
			want:    want{conflicts: []string{"f"}, notSynced: []string{"f"}},
		},
	}
	for _, reopen := range []bool{false, true} {
		for _, tc := range tests {
			name := tc.name
			if reopen {
				name += ", reopened"
			}
			t.Run(name, func(t *testing.T) {
				base := t.TempDir()
				outside := filepath.Join(base, "outside")
				write(t, filepath.Join(outside, "o"), "outside")
				root := filepath.Join(base, "root")
				must(t, os.MkdirAll(root, 0o755))
				link(t, "d", filepath.Join(root, "l"))
				s, _ := syncTree(t, base, files)
				if reopen {
					must(t, s.Save())
					var err error
					if s, err = Open(s.Dir); err != nil {
						t.Fatal(err)
					}
				}
				tc.agent(t, s.Tree)
				if tc.user != nil {
					tc.user(t, root)
				}
				before, outsideBefore := snapshot(t, root), snapshot(t, outside)

				dry, err := syncWithin(t, s, SyncOptions{Deletes: tc.deletes, DryRun: true})
				if err != nil {
					t.Fatalf("dry run: %v", err)
				}
				if got := snapshot(t, root); !mapsEqual(got, before) {
					t.Fatalf("the dry run changed the real tree:\n got %v\nwant %v", got, before)
				}
				r, err := syncWithin(t, s, SyncOptions{Deletes: tc.deletes})
				if err != nil {
					t.Fatalf("Sync: %v", err)
				}
				for _, rep := range []struct {
					name string
					r    *Report
				}{{"sync", r}, {"dry run", dry}} {
					var conflicts []string
					for _, c := range rep.r.Conflicts {
						conflicts = append(conflicts, c.Path)
					}
					for _, c := range []struct {
						what      string
						got, want []string
					}{
						{"created", rep.r.Created, tc.want.created},
						{"updated", rep.r.Updated, nil},
						{"deleted", rep.r.Deleted, tc.want.deleted},
						{"unapplied", rep.r.Unapplied, tc.want.unapplied},
						{"blocked", rep.r.Blocked, tc.want.blocked},
						{"conflicts", conflicts, tc.want.conflicts},
						{"not synced", rep.r.NotSynced, tc.want.notSynced},
					} {
						if !slices.Equal(c.got, c.want) && len(c.got)+len(c.want) > 0 {
							t.Errorf("%s: %s = %q, want %q", rep.name, c.what, c.got, c.want)
						}
					}
					if len(rep.r.Failed) > 0 {
						t.Errorf("%s: failed = %v", rep.name, rep.r.Failed)
					}
				}

				want := before
				for _, rel := range tc.want.gone {
					delete(want, rel)
				}
				for rel, v := range tc.want.made {
					want[rel] = v
				}
				for _, c := range r.Conflicts {
					if c.Saved == "" {
						continue // a deletion's
					}
					saved, err := os.ReadFile(c.Saved)
					agent, _ := os.ReadFile(filepath.Join(s.Tree, filepath.FromSlash(c.Path)))
					if err != nil || string(saved) != string(agent) {
						t.Errorf("conflict %s: saved %q, %v; want the agent's %q", c.Path, saved, err, agent)
					}
				}
				if got := snapshot(t, root); !mapsEqual(got, want) {
					t.Errorf("real tree:\n got %v\nwant %v", sortedEntries(got), sortedEntries(want))
				}
				if got := snapshot(t, outside); !mapsEqual(got, outsideBefore) {
					t.Errorf("sync-back wrote outside the project: %v", got)
				}

				// The session can finish: what was left applies with
				// Deletes, and nothing is left after that.
				again, err := syncWithin(t, s, SyncOptions{Deletes: true})
				if err != nil {
					t.Fatalf("second Sync: %v", err)
				}
				if len(tc.want.conflicts) == 0 {
					if len(again.Conflicts)+len(again.Blocked)+len(again.Unapplied)+len(again.Failed) > 0 {
						t.Errorf("second Sync with deletions = %+v, want no conflict and nothing left", again)
					}
					last, err := syncWithin(t, s, SyncOptions{Deletes: true})
					if err != nil || last.Changes()+len(last.Conflicts)+len(last.Blocked) > 0 {
						t.Errorf("third Sync = %+v, %v; want nothing to do", last, err)
					}
				}
			})
		}
	}
}

// sortedEntries lists a snapshot's entries in order, for messages.
func sortedEntries(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

// TestSyncRemovesEmptiedDirectories: with Deletes, a directory the agent
// renamed or removed is removed from the real tree once its files are,
// but not one the agent kept, one that was empty at copy time (nor the
// directories above it), one that holds a file the user added, nor the
// root.
func TestSyncRemovesEmptiedDirectories(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	for _, d := range []string{"old/empty-before", "was-empty"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	s, _ := syncTree(t, base, map[string]string{"old/a": "a", "old/sub/b": "b", "kept/c": "c", "withnew/d": "d", "top.txt": "t"})
	must(t, os.Rename(filepath.Join(s.Tree, "old"), filepath.Join(s.Tree, "new")))
	must(t, os.Remove(filepath.Join(s.Tree, "kept/c")))
	must(t, os.RemoveAll(filepath.Join(s.Tree, "withnew")))
	must(t, os.Remove(filepath.Join(s.Tree, "top.txt")))
	write(t, filepath.Join(root, "withnew/user.txt"), "the user's")

	r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kept/c", "old/a", "old/sub/b", "top.txt", "withnew/d"}; !slices.Equal(r.Deleted, want) {
		t.Errorf("deleted = %v, want %v", r.Deleted, want)
	}
	got := snapshot(t, root)
	for _, rel := range []string{"old/sub", "old/a", "top.txt"} {
		if _, ok := got[rel]; ok {
			t.Errorf("%s is still in the real tree", rel)
		}
	}
	for _, rel := range []string{".", "old", "old/empty-before", "kept", "was-empty", "withnew", "withnew/user.txt", "new/a", "new/sub/b"} {
		if _, ok := got[rel]; !ok {
			t.Errorf("%s is not in the real tree", rel)
		}
	}

	// Renamed, and nothing kept in it: the directory goes entirely; a dry
	// run removes nothing.
	base = t.TempDir()
	s, root = syncTree(t, base, map[string]string{"old/a": "a", "old/sub/b": "b"})
	must(t, os.Rename(filepath.Join(s.Tree, "old"), filepath.Join(s.Tree, "new")))
	before := snapshot(t, root)
	if _, err := s.Sync(context.Background(), SyncOptions{Deletes: true, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, root); !mapsEqual(got, before) {
		t.Errorf("a dry run changed the real tree: %v", sortedEntries(got))
	}
	if _, err := s.Sync(context.Background(), SyncOptions{Deletes: true}); err != nil {
		t.Fatal(err)
	}
	got = snapshot(t, root)
	dir := got["new"]
	want := map[string]string{".": got["."], "new": dir, "new/a": `file -rw-r--r-- "a"`, "new/sub": dir, "new/sub/b": `file -rw-r--r-- "b"`}
	if !mapsEqual(got, want) {
		t.Errorf("real tree after a rename = %v, want %v", sortedEntries(got), sortedEntries(want))
	}
}

// TestSyncAppliedIsBase: what a sync applied leaves the pending set: the
// real tree it left is the base of the next sync, in this process or in
// another (SaveApplied, Open), so that what the user does to those files
// afterwards is the user's (no conflict, a deleted file not made again),
// and only what the agent changes again syncs again.
func TestSyncAppliedIsBase(t *testing.T) {
	files := map[string]string{"a.txt": "a", "b.txt": "b", "keep.txt": "keep"}
	tests := []struct {
		name    string
		agent   func(t *testing.T, tree string) // before the first sync
		user    func(t *testing.T, root string) // between the syncs; nil: none
		again   func(t *testing.T, tree string) // the agent, between the syncs; nil: none
		deletes bool
		// The second sync's report and the real files after it (nil
		// content: absent).
		created, updated, deleted, conflicts []string
		real                                 map[string]*string
	}{
		{
			name:  "updated, then edited by the user",
			agent: func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's") },
			user:  func(t *testing.T, root string) { write(t, filepath.Join(root, "a.txt"), "then the user's") },
			real:  map[string]*string{"a.txt": ptr("then the user's")},
		},
		{
			name:    "updated, then deleted by the user",
			agent:   func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's") },
			user:    func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, "a.txt"))) },
			deletes: true,
			real:    map[string]*string{"a.txt": nil},
		},
		{
			name:  "created, then deleted by the user",
			agent: func(t *testing.T, tree string) { write(t, filepath.Join(tree, "new.txt"), "the agent's") },
			user:  func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, "new.txt"))) },
			real:  map[string]*string{"new.txt": nil},
		},
		{
			name:  "created, then edited by the user",
			agent: func(t *testing.T, tree string) { write(t, filepath.Join(tree, "new.txt"), "the agent's") },
			user:  func(t *testing.T, root string) { write(t, filepath.Join(root, "new.txt"), "then the user's") },
			real:  map[string]*string{"new.txt": ptr("then the user's")},
		},
		{
			name:    "deleted, then made again by the user",
			agent:   func(t *testing.T, tree string) { must(t, os.Remove(filepath.Join(tree, "b.txt"))) },
			user:    func(t *testing.T, root string) { write(t, filepath.Join(root, "b.txt"), "the user's again") },
			deletes: true,
			real:    map[string]*string{"b.txt": ptr("the user's again")},
		},
		{
			name: "written by both alike, then edited by the user",
			agent: func(t *testing.T, tree string) {
				write(t, filepath.Join(tree, "a.txt"), "alike")
				write(t, filepath.Join(filepath.Dir(tree), "..", "..", "root", "a.txt"), "alike")
			},
			user: func(t *testing.T, root string) { write(t, filepath.Join(root, "a.txt"), "then the user's") },
			real: map[string]*string{"a.txt": ptr("then the user's")},
		},
		{
			name:    "updated, then changed again by the agent",
			agent:   func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's") },
			again:   func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's again") },
			updated: []string{"a.txt"},
			real:    map[string]*string{"a.txt": ptr("the agent's again")},
		},
		{
			name:      "updated, then changed again by both",
			agent:     func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's") },
			user:      func(t *testing.T, root string) { write(t, filepath.Join(root, "a.txt"), "then the user's") },
			again:     func(t *testing.T, tree string) { write(t, filepath.Join(tree, "a.txt"), "the agent's again") },
			conflicts: []string{"a.txt"},
			real:      map[string]*string{"a.txt": ptr("then the user's")},
		},
		{
			name:    "created, then deleted by the agent",
			agent:   func(t *testing.T, tree string) { write(t, filepath.Join(tree, "new.txt"), "the agent's") },
			again:   func(t *testing.T, tree string) { must(t, os.Remove(filepath.Join(tree, "new.txt"))) },
			deletes: true,
			deleted: []string{"new.txt"},
			real:    map[string]*string{"new.txt": nil},
		},
	}
	for _, reopen := range []bool{false, true} {
		for _, tc := range tests {
			name := tc.name
			if reopen {
				name += ", in another process"
			}
			t.Run(name, func(t *testing.T) {
				s, root := syncTree(t, t.TempDir(), files)
				tc.agent(t, s.Tree)
				r, err := s.Sync(context.Background(), SyncOptions{Deletes: tc.deletes})
				if err != nil || len(r.Conflicts) > 0 {
					t.Fatalf("first Sync = %+v, %v", r, err)
				}
				if reopen {
					must(t, s.SaveApplied())
					if s, err = Open(s.Dir); err != nil {
						t.Fatal(err)
					}
				}
				if tc.user != nil {
					tc.user(t, root)
				}
				if tc.again != nil {
					tc.again(t, s.Tree)
				}
				dry, err := s.Sync(context.Background(), SyncOptions{Deletes: tc.deletes, DryRun: true})
				if err != nil {
					t.Fatal(err)
				}
				r, err = s.Sync(context.Background(), SyncOptions{Deletes: tc.deletes})
				if err != nil {
					t.Fatal(err)
				}
				for _, rep := range []*Report{dry, r} {
					var conflicts []string
					for _, c := range rep.Conflicts {
						conflicts = append(conflicts, c.Path)
					}
					for _, c := range []struct {
						what      string
						got, want []string
					}{
						{"created", rep.Created, tc.created},
						{"updated", rep.Updated, tc.updated},
						{"deleted", rep.Deleted, tc.deleted},
						{"conflicts", conflicts, tc.conflicts},
						{"unapplied", rep.Unapplied, nil},
					} {
						if !slices.Equal(c.got, c.want) && len(c.got)+len(c.want) > 0 {
							t.Errorf("second Sync (dry run %v): %s = %q, want %q", rep == dry, c.what, c.got, c.want)
						}
					}
				}
				for rel, want := range tc.real {
					data, err := os.ReadFile(filepath.Join(root, rel))
					switch {
					case want == nil && err == nil:
						t.Errorf("real %s = %q, want none", rel, data)
					case want != nil && (err != nil || string(data) != *want):
						t.Errorf("real %s = %q, %v; want %q", rel, data, err, *want)
					}
				}
			})
		}
	}
}

// TestSyncKeepsLinkUnderMaterialized: the instruction file materialized in
// the place of a real link is not the agent's removal of the link.
func TestSyncKeepsLinkUnderMaterialized(t *testing.T) {
	for _, reopen := range []bool{false, true} {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		must(t, os.MkdirAll(root, 0o755))
		must(t, os.Symlink("CLAUDE.md", filepath.Join(root, "AGENTS.md")))
		s, _ := syncTree(t, base, map[string]string{"CLAUDE.md": "instructions"})
		if _, err := s.Materialize("AGENTS.md", "persona"); err != nil {
			t.Fatal(err)
		}
		if reopen {
			must(t, s.Save())
			var err error
			if s, err = Open(s.Dir); err != nil {
				t.Fatal(err)
			}
		}
		r, err := s.Sync(context.Background(), SyncOptions{Deletes: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Changes() != 0 || len(r.Conflicts)+len(r.Blocked)+len(r.NotSynced) != 0 {
			t.Errorf("reopened %v: report = %+v, want nothing", reopen, r)
		}
		if target, err := os.Readlink(filepath.Join(root, "AGENTS.md")); err != nil || target != "CLAUDE.md" {
			t.Errorf("reopened %v: real AGENTS.md = %q, %v; want the link to CLAUDE.md", reopen, target, err)
		}
	}
}

// TestSyncFileOverDirectory: a file the agent put in the place of a
// directory whose files of the copy are gone from the real tree already
// (an earlier sync or live sync applied their removal, and the directory
// stayed): an empty directory is the removal part of the type change,
// left out without Deletes (Blocked, no conflict) and applied with; a
// directory holding what the copy never had (an ignored file, one the
// user made since) stays, a conflict whose Reason says so.
func TestSyncFileOverDirectory(t *testing.T) {
	base := t.TempDir()
	s, root := syncTree(t, base, map[string]string{"d1/x": "x", "d2/x": "x", ".agentignore": "d2/ign.txt\n"})
	write(t, filepath.Join(root, "d2/ign.txt"), "ignored")
	// The removal of d1/x and d2/x applied, as live sync does.
	for _, d := range []string{"d1", "d2"} {
		must(t, os.Remove(filepath.Join(root, d, "x")))
		s.forget(d + "/x")
		must(t, os.RemoveAll(filepath.Join(s.Tree, d)))
		write(t, filepath.Join(s.Tree, d), "now a file")
	}
	write(t, filepath.Join(root, "d2/sub/user.txt"), "the user's")

	r, err := s.Sync(context.Background(), SyncOptions{})
	must(t, err)
	if !slices.Equal(r.Blocked, []string{"d1"}) || len(r.Conflicts) != 1 || r.Conflicts[0].Path != "d2" {
		t.Fatalf("without Deletes: blocked %v, conflicts %+v", r.Blocked, r.Conflicts)
	}
	r, err = s.Sync(context.Background(), SyncOptions{Deletes: true})
	must(t, err)
	if !slices.Equal(r.Created, []string{"d1"}) || len(r.Blocked) != 0 {
		t.Errorf("with Deletes: created %v, blocked %v", r.Created, r.Blocked)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d1")); string(got) != "now a file" {
		t.Errorf("real d1 = %q", got)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "d2" {
		t.Fatalf("conflicts = %+v, want d2", r.Conflicts)
	}
	const want = "is a directory in the repository that holds files the sandbox never had (d2/ign.txt, d2/sub): it stays, and the agent's file is not written"
	if c := r.Conflicts[0]; c.Reason != want || c.Saved == "" {
		t.Errorf("conflict = %+v, want the reason %q", c, want)
	}
	if _, err := os.Stat(filepath.Join(root, "d2/ign.txt")); err != nil {
		t.Errorf("the ignored file is gone: %v", err)
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
