package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves the flags of the command named on the command line in
// front of its positional arguments, so that `workforce show ID --json`
// works as users expect; urfave/cli stops reading flags at the first
// positional argument. Everything from "--" on is left in place and reaches
// the command as arguments, "--" included, so that commands passing
// arguments through (run) can find where they start.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	i := 1
	var leaf *cli.Command
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if leaf != nil {
				break // the command's own flags
			}
			out = append(out, a)
			i++
			continue
		}
		c := findCommand(cmds, a)
		if c == nil {
			break
		}
		out = append(out, a)
		i++
		leaf = c
		if len(c.Subcommands) == 0 {
			break
		}
		cmds = c.Subcommands
	}
	if leaf == nil {
		return append(out, args[i:]...)
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if !strings.Contains(a, "=") && takesValue(leaf, a) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(out, flags...), positional...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether flag arg of c needs a value argument.
func takesValue(c *cli.Command, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}
