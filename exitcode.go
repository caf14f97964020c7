package main

// Exit codes of the workforce command. They are part of the command-line
// contract: never renumber them. The README documents them.
const (
	// exitOK means the command did what was asked.
	exitOK = 0
	// exitFailure means the command failed; the error says why.
	exitFailure = 1
	// exitUsage means the command line was wrong: unknown flag, missing
	// argument, conflicting flags.
	exitUsage = 2
	// exitConflict means an install or sync-back found conflicts and left the
	// conflicting files as they were.
	exitConflict = 3
	// exitHarnessMissing means the harness binary was not found on PATH.
	exitHarnessMissing = 127
)
