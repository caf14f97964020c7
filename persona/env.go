package persona

import (
	"fmt"
	"slices"
	"strings"
)

// A persona's env is set in the harness's environment, and a persona file
// can come from places an agent writes: the project layer, a task's
// repository, a persona that `create` authored. Some variables change what
// code a program loads, or where the C library reads data it trusts, in
// every dynamically linked program the harness starts: the loader runs a
// shared object named in LD_PRELOAD before main. Confined, such code runs
// inside the write sandbox (the launcher never sees the harness's
// environment: package confine); but a harness runs unconfined where
// Landlock is missing or the sandbox is off, and a persona must not be a
// way to run code the user did not choose. So a persona's env may not
// set them (LoaderVariable): the file is refused, at the variable's
// line and column.
//
// The list is glibc's UNSECURE_ENVVARS (sysdeps/generic/unsecvars.h),
// what the loader drops for a set-user-ID program because the program
// cannot trust it, widened to every LD_ variable (the loaders read more
// than glibc drops: LD_BIND_NOW, LD_ASSUME_KERNEL, musl's), less TMPDIR:
//
//   - LD_*: the dynamic loader (preloaded objects, audit modules, the
//     library search path, debugging output written to a file);
//   - GCONV_PATH: iconv loads its conversion modules (shared objects)
//     from there; GETCONF_DIR: getconf executes programs from there;
//   - GLIBC_TUNABLES: parsed by the loader before main (CVE-2023-4911);
//   - LOCPATH, NLSPATH, TZDIR: locale, message catalogue and time zone
//     files the C library parses as trusted;
//   - HOSTALIASES, LOCALDOMAIN, RES_OPTIONS, RESOLV_HOST_CONF, NIS_PATH:
//     how host names resolve, which would send the harness's requests
//     (its API key with them) elsewhere;
//   - MALLOC_TRACE: a file the allocator writes its trace to.
//
// TMPDIR stays allowed: workforce itself sets it (the session's tmp), a
// persona may choose another, and it changes where files are written,
// which the write sandbox decides, not what code runs. Other MALLOC_
// variables (MALLOC_ARENA_MAX, MALLOC_CHECK_) tune the allocator and stay
// allowed too.

// unsafeEnv are the variables of glibc's UNSECURE_ENVVARS that do not
// start with LD_, less TMPDIR, and GLIBC_TUNABLES, which glibc filters
// apart.
var unsafeEnv = []string{"GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
	"MALLOC_TRACE", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR"}

// LoaderVariable reports whether a persona's env may not set the
// environment variable name: one that changes what code a program loads
// (every LD_ variable, GCONV_PATH, GETCONF_DIR, GLIBC_TUNABLES) or data the
// C library trusts (glibc's other unsecure variables but TMPDIR). Names are
// case-sensitive, as the C library reads them.
func LoaderVariable(name string) bool {
	return strings.HasPrefix(name, "LD_") || slices.Contains(unsafeEnv, name)
}

// envProblem says why a persona's env may not set the variable name to
// value, "" when it may: a loader variable (LoaderVariable), or a value
// that no environment can carry (a NUL byte), which would otherwise fail
// only when the harness is executed, after the sandbox was made. (The
// schema already refuses a name that is not a variable's.)
func envProblem(name, value string) string {
	switch {
	case LoaderVariable(name):
		return fmt.Sprintf("a persona may not set %s: it changes what code the harness's programs load, or what their C library trusts", name)
	case strings.ContainsRune(value, 0):
		return fmt.Sprintf("the value of %s holds a NUL byte, which no environment can carry", name)
	}
	return ""
}

// EnvRefusals returns the catalog's errors that refuse a loader variable
// in the env of a file that is, or was meant to be, persona id (named
// <id>.json, or whose id member is id): a run of id refuses to start on
// them rather than fall back to the persona below, as an override that
// fails otherwise does.
func (c *Catalog) EnvRefusals(id string) []*Diagnostic {
	var out []*Diagnostic
	for _, d := range c.Errors {
		if k, ok := strings.CutPrefix(d.Field, "env."); ok && LoaderVariable(k) && c.wouldBe(d.File, id) {
			out = append(out, d)
		}
	}
	return out
}
