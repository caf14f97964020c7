package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/urfave/cli/v2"
)

// This file is shared by context, harness check and run: which discovery
// profile applies to a harness.

// profileFlag is the --profile flag of context and run.
func profileFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "profile", Usage: "use this discovery profile instead of the one of the installed harness version: " + strings.Join(discover.Names(), ", ")}
}

// versionCache remembers harness versions in <home>/cache
// (home.HarnessVersions); without a home, it remembers nothing.
func versionCache(env procEnv) harness.VersionCache {
	home, err := env.home()
	if err != nil {
		return harness.VersionCache{}
	}
	return harness.VersionCache{File: homedir.HarnessVersions(home)}
}

// harnessProfile returns the discovery profile for harness h: the one
// profile names (it must describe h), else the family of the installed
// version of h (warning once to stderr when that version was not
// measured), else, when h is not installed, h's default profile. The
// second result is the installed version, when known (with a profile
// named too).
func harnessProfile(ctx context.Context, stderr io.Writer, env procEnv, profile, h string) (discover.Profile, string, error) {
	if profile != "" {
		p, ok := discover.Lookup(profile)
		if !ok {
			return p, "", usageError(fmt.Errorf("unknown profile %q", profile), "--profile takes one of "+strings.Join(discover.Names(), ", "))
		}
		if p.Harness != h {
			return p, "", usageError(fmt.Errorf("profile %s is not a profile of %s", profile, h))
		}
		// The profile is the user's choice; the version still goes into
		// the plan and a one-shot run's result.
		return p, versionCache(env).Installed(ctx, h, env.Environ).Version, nil
	}
	p, st, note := versionCache(env).Profile(ctx, h, env.Environ)
	if note != "" {
		warnf(stderr, "%s", note)
	}
	return p, st.Version, nil
}
