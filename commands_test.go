package main

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestUsageText fails when a command or flag has no usage text, or a command
// has no example in its description.
func TestUsageText(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	if len(app.Commands) == 0 {
		t.Fatal("no commands registered")
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				// urfave/cli's own, added to a command once it has run
				// (the registered commands are shared by every app).
				continue
			}
			name := path + " " + c.Name
			if c.Usage == "" {
				t.Errorf("command %q has no usage text", name)
			}
			if c.Subcommands == nil && c.Description == "" {
				t.Errorf("command %q has no description with an example", name)
			}
			for _, f := range c.Flags {
				if df, ok := f.(cli.DocGenerationFlag); ok && df.GetUsage() == "" {
					t.Errorf("flag %v of command %q has no usage text", f.Names(), name)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("workforce", app.Commands)
}

// TestUsageErrors walks every command: an unknown flag, a value a typed
// flag cannot parse and an unknown subcommand each exit with the usage
// status and say what is wrong, before the command does anything.
func TestUsageErrors(t *testing.T) {
	t.Setenv("AGENT_WORKFORCE_HOME", t.TempDir())
	app := newApp(io.Discard, io.Discard)
	type usageCase struct {
		args []string
		want string
	}
	var cases []usageCase
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			cases = append(cases, usageCase{append(append([]string(nil), p...), "--no-such-flag"), "unknown flag --no-such-flag for workforce " + strings.Join(p, " ")})
			for _, f := range c.Flags {
				n := "--" + f.Names()[0]
				switch f.(type) {
				case *cli.DurationFlag:
					cases = append(cases,
						usageCase{append(append([]string(nil), p...), n+"=abc"), "invalid value \"abc\": not a duration"},
						usageCase{append(append([]string(nil), p...), n+"=-5s"), "invalid duration -5s: it cannot be negative"})
				case *cli.IntFlag:
					cases = append(cases,
						usageCase{append(append([]string(nil), p...), n+"=abc"), "invalid value \"abc\": not a whole number"},
						usageCase{append(append([]string(nil), p...), n+"=-1"), "invalid value -1: must be"})
				case *cli.BoolFlag:
					cases = append(cases, usageCase{append(append([]string(nil), p...), n+"=maybe"), "invalid value \"maybe\": not true or false"})
				}
			}
			if len(c.Subcommands) > 0 && c.Action == nil {
				cases = append(cases, usageCase{append(append([]string(nil), p...), "no-such-command"), "unknown command \"no-such-command\" for workforce " + strings.Join(p, " ")})
			}
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	cases = append(cases,
		usageCase{[]string{"--no-such-flag"}, "unknown flag --no-such-flag for workforce"},
		usageCase{[]string{"no-such-command"}, "unknown command \"no-such-command\" for workforce"},
		usageCase{[]string{"help", "no-such-command"}, "unknown command \"no-such-command\" for workforce"},
		usageCase{[]string{"export", "code-reviewer"}, "workforce export needs --harness"},
		usageCase{[]string{"context", "resolve", "x"}, "workforce context resolve needs --state"},
		usageCase{[]string{"context", "resume"}, "workforce context resume needs --state"},
		usageCase{[]string{"harness", "check", "extra"}, "workforce harness check takes no arguments, not \"extra\""},
		usageCase{[]string{"sources", "list", "extra"}, "workforce sources list takes no arguments, not \"extra\""},
		usageCase{[]string{"outdated", "extra"}, "workforce outdated takes no arguments, not \"extra\""},
		usageCase{[]string{"sessions", "nosuch"}, "unknown command \"nosuch\" for workforce sessions"},
		usageCase{[]string{"sessions", "worker-20261124-101500-1a2b3c4d"}, "workforce: hint: to see one: workforce sessions show worker-20261124-101500-1a2b3c4d"},
		usageCase{[]string{"help", "--no-such-flag"}, "unknown flag --no-such-flag for workforce help"},
		usageCase{[]string{"list", "--harness"}, "workforce list --harness needs a value"},
	)
	if len(cases) < 40 {
		t.Fatalf("only %d cases: the walk found too few commands", len(cases))
	}
	for _, tc := range cases {
		var stdout, stderr strings.Builder
		code := runApp(append([]string{"workforce"}, tc.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("workforce %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, stderr.String(), exitUsage, tc.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("workforce %s: stdout %q, want nothing", strings.Join(tc.args, " "), stdout.String())
		}
	}
}

// TestFlagHelpOneDefault: a flag whose usage says its own default does
// not get urfave/cli's besides ("(default: twice the cores) (default:
// 0)").
func TestFlagHelpOneDefault(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	var walk func(path string, cmds []*cli.Command)
	n := 0
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := path + " " + c.Name
			for _, f := range c.Flags {
				n++
				if help := cli.FlagStringer(f); strings.Count(help, "(default") > 1 {
					t.Errorf("%s: two defaults in %q", name, help)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("workforce", app.Commands)
	if n < 50 {
		t.Fatalf("only %d flags: the walk found too few commands", n)
	}
}
