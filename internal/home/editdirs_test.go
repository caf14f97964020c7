package home

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEditDirs: the directory edit is given is absolute, under the
// working directory unless it starts with ~ or is absolute (the working
// directory asked for only then); config.json is written when edit
// changed it only.
func TestEditDirs(t *testing.T) {
	noWD := func() (string, error) { return "", errors.New("no working directory") }
	wd := func() (string, error) { return "/work/here", nil }
	tests := []struct {
		name    string
		dir     string
		wd      func() (string, error)
		changed bool
		editErr error
		want    string   // the directory edit got
		dirs    []string // personaDirs written; nil: no file
		wantErr bool
	}{
		{"relative", "team", wd, true, nil, "/work/here/team", []string{"/work/here/team"}, false},
		{"absolute", "/srv/p", noWD, true, nil, "/srv/p", []string{"/srv/p"}, false},
		{"home", "~/p", noWD, true, nil, "~/p", []string{"~/p"}, false},
		{"the home itself", "~", noWD, true, nil, "~", []string{"~"}, false},
		{"no working directory", "team", noWD, true, nil, "", nil, true},
		{"unchanged", "/srv/p", wd, false, nil, "/srv/p", nil, false},
		{"refused", "/srv/p", wd, true, errors.New("no"), "/srv/p", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			var got string
			err := EditDirs(home, tt.dir, tt.wd, func(cfg *Config, dir string) (bool, error) {
				got = dir
				cfg.PersonaDirs = append(cfg.PersonaDirs, dir)
				return tt.changed, tt.editErr
			})
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("EditDirs: edit got %q, error %v; want %q, an error: %v", got, err, tt.want, tt.wantErr)
			}
			if _, err := os.Stat(filepath.Join(home, "config.json")); (err == nil) != (tt.dirs != nil) {
				t.Fatalf("config.json written: %v, want %v", err == nil, tt.dirs != nil)
			}
			if tt.dirs != nil {
				cfg, err := ReadConfig(home)
				if err != nil || !reflect.DeepEqual(cfg.PersonaDirs, tt.dirs) {
					t.Errorf("config.json holds %v (%v), want %v", cfg.PersonaDirs, err, tt.dirs)
				}
			}
		})
	}
}
