// Package batch runs many persona tasks as one-shot runs: the batch file
// (Parse: JSONL or YAML, one Task an entry; Load checks each entry beyond
// its syntax, the personas through a Lookup the caller gives; both go on
// past a wrong entry and return every problem of the file at once,
// Problems, by line, so that batch --dry-run lists them all), the state
// of a batch on disk (State: <home>/batches/<id>/, written atomically,
// which makes a batch resumable; OpenFile opens and locks it, and with
// Rerun sets the last run's task states aside in previous/ so that every
// task runs again under the same id; OpenAt opens the state of tasks a
// caller prepared, in a directory of its own: workforce eval's attempts,
// in <home>/evals/<id>/), the pool
// that runs tasks a few at a time (Pool), and the local pool's loop
// (Batch.RunLocal: plan, run, record each task's state). batch --dry-run's
// plan is DryRun: what a run now would do with each task (Decisions), and
// its text (WriteText, on the writer the command layer gives).
//
// The package prints nothing and decides no exit status: RunLocal tells
// its progress through Hooks and returns how the batch ended (Ended); it
// catches no signal itself, but asks the caller for them (Signals) once
// its tasks are about to run, and a wrong batch file is a FileError, a
// batch another process holds a LockError, for the command layer to
// print and map to a status.
//
// Each task runs as its own process: the workforce binary itself, as
// `workforce run PERSONA - --events` in the task's directory with the task
// on stdin (Command). That reuses every guarantee of run (its own sandbox
// and session, signals, sync-back and its conflicts, the results
// directory) and isolates the tasks from each other and from the pool: a
// task that crashes takes nothing else down. The pool reads the child's
// events as they come (its progress) and the result the last one carries;
// a child that printed no result (it never started: an unknown persona, a
// harness not installed) is an Outcome with its exit code and the end of
// its stderr. A queue worker reuses Command, RunTask and Outcome as they
// are.
//
// Stopping: Pool.Signal passes a signal on to every running child (each
// in a process group of its own, so that a terminal's Ctrl-C reaches the
// pool only and the pool decides); run then stops its harness and syncs
// the work back as on any signal, and reports the status interrupted. A
// task that ended interrupted is not done: the next run of the batch runs
// it again (Plan). A pool killed outright passes nothing on: on Linux
// each child has a parent-death signal (ParentDeathSignal, which the
// kernel sends a few times and run takes once, as SIGTERM), so its
// harness stops rather than runs on unattended; its events and stderr go to the
// task's files (RunTask), not to pipes that would die with the pool, so
// the run reaches its end and syncs its work back.
//
// Time limits: a run enforces its task's timeout itself, but a run
// stopped with SIGSTOP (by its own agent) never sees its timer fire; the
// pool holds a task with a timeout to it from outside as well (limit.go:
// past it, a run found stopped, or still there LimitGrace later, is
// continued and sent SIGTERM, to its process group; found stopped again,
// or still there KillGrace after that, it is killed with every process
// below it), and the task ends timed_out with a word of what the pool
// did. A task without a timeout has no such limit.
//
// A task's network narrows its run's network policy: Command gives it as
// --network-narrow, which never widens what the user's (or a worker's)
// config.json and flags allow; internal/netspec checks its words.
//
// The package may import report (the result and event types),
// internal/quote (names in errors), internal/netspec and the standard
// library, plus
// renameio (atomic state files), x/sys/unix (the batch's lock), yaml (the
// YAML batch files) and internal/proctree (the processes below a run):
// nothing of the persona, session or harness packages, which the command
// layer and the child process own.
package batch
