package home

import (
	"path/filepath"
	"strings"
)

// EditDirs reads home's config.json, gives edit the persona directory
// dir as personaDirs holds it (as given when it starts with ~ or is
// absolute, else under the working directory wd gives, asked for only
// then), and writes the file back when edit says it changed it.
func EditDirs(home, dir string, wd func() (string, error), edit func(cfg *Config, dir string) (changed bool, err error)) error {
	cfg, err := ReadConfig(home)
	if err != nil {
		return err
	}
	if dir != "~" && !strings.HasPrefix(dir, "~/") && !filepath.IsAbs(dir) {
		w, err := wd()
		if err != nil {
			return err
		}
		dir = filepath.Join(w, dir)
	}
	changed, err := edit(cfg, dir)
	if err != nil || !changed {
		return err
	}
	return WriteConfig(home, cfg)
}
