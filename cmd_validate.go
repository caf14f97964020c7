package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check persona files and list every problem",
		ArgsUsage: "[PATH...]",
		Description: `Checks persona files: JSON syntax, the schema, sidecar paths and the files
they name, and the persona each file makes once laid over your layers (an
override must find its base; extends must not form a cycle; a tier's model
is one its harness can reach: docs/run.md#model). A directory
stands for the *.json files directly in it; a PATH may be a doublestar glob
(personas/**/*.json), and one that matches no file is an error. Without a
PATH, every file of every layer is checked (project, configured
directories, built-in). Every error is listed with file:line:column where it
applies; warnings (missing sidecars, ignored cloud fields) too; the exit
status is 1 when there is any error.

Example:

   workforce validate
   workforce validate .agentworkforce/workforce/personas
   workforce validate reviewer.json 'packs/**/*.json'`,
		Action: validateAction,
	}
}

// validateOptions are what `workforce validate` checks: the persona files
// Paths name (files, directories, patterns), or without any every file of
// every layer.
type validateOptions struct {
	Paths []string
	Env   procEnv
}

func validateAction(c *cli.Context) error {
	return runValidate(c.Context, newStreams(c), validateOptions{Paths: c.Args().Slice(), Env: newProcEnv()})
}

func runValidate(_ context.Context, ios *iostreams, opts validateOptions) error {
	return validatePersonas(ios, opts.Env, opts.Paths)
}
