package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

// This file is shared by context and run: which discovery profile applies
// to a harness.

// profileFlagDef is the --profile flag of context and run.
var profileFlagDef = &cli.StringFlag{Name: "profile", Usage: "use this discovery profile instead of the one of the installed harness version: " + strings.Join(discover.Names(), ", ")}

// versionCache remembers harness versions under <home>/cache.
func versionCache() harness.VersionCache {
	home, err := persona.Home()
	if err != nil {
		return harness.VersionCache{}
	}
	return harness.VersionCache{File: filepath.Join(home, "cache", "harness-versions.json")}
}

// harnessProfile returns the discovery profile for harness h: the one
// --profile names (it must describe h), else the family of the installed
// version of h (warning once when that version was not measured), else,
// when h is not installed, h's default profile. The second result is the
// installed version, when known.
func harnessProfile(c *cli.Context, h string) (discover.Profile, string, error) {
	if name := c.String("profile"); name != "" {
		p, ok := discover.Lookup(name)
		if !ok {
			return p, "", usageError(fmt.Errorf("unknown profile %q", name), "--profile takes one of "+strings.Join(discover.Names(), ", "))
		}
		if p.Harness != h {
			return p, "", usageError(fmt.Errorf("profile %s is not a profile of %s", name, h))
		}
		return p, "", nil
	}
	p, st, note := versionCache().Profile(c.Context, h, os.Environ())
	if note != "" {
		warnf(c.App.ErrWriter, "%s", note)
	}
	return p, st.Version, nil
}
