package main

import (
	"io"
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
