// Package queue runs a batch's tasks on workers beyond this machine,
// through NATS JetStream: the submitter (`workforce batch FILE --queue`)
// publishes each task, workers (`workforce worker`) pull and run them and
// publish each one's result, and the submitter (or `batch status --queue`)
// reads the results. docs/queue.md is the user's side of it.
//
// On the server (Conn makes what is missing, and leaves alone what an
// operator set up):
//
//   - TaskStream (WORKFORCE_TASKS, subjects workforce.tasks.>): work-queue
//     retention (a task leaves it when a worker acks it), file storage,
//     one message a subject with new ones refused (DiscardNewPerSubject),
//     so that a task published again while it waits is not queued twice;
//     its message id (Nats-Msg-Id) makes a retried publication a no-op
//     too. One subject a task: workforce.tasks.<batch>.<submission>.<task>,
//     each id encoded as one token (Token: ids may hold '.'). The design
//     first had one subject a batch; a subject a task is what lets the
//     stream refuse a duplicate, and lets the submitter ask whether a task
//     is still queued (Queued) or take it back (Withdraw).
//   - Consumer (workers): the workers' durable pull consumer, explicit
//     acks, an ack wait (DefaultAckWait, set by the worker that makes it:
//     --ack-wait), MaxDeliver deliveries at most.
//   - ResultStream (WORKFORCE_RESULTS, subjects workforce.results.>):
//     limits retention, ResultMaxAge, ResultsPerSubject messages a
//     subject and the next refused. Each task's result is reported once
//     (a worker that finds its task's result, or whose publication is a
//     duplicate, reports nothing: ErrReported), and readers count the
//     first result the task's seal verifies (seal.go): the room beside
//     it is for the worker's own result when one not sealed came first.
//     Its subject has the task's key.
//   - AdvisoryStream (WORKFORCE_ADVISORIES): the server's advisories of
//     tasks delivered MaxDeliver times without an ack, kept until a sweep
//     (Sweep) reports each such task as failed and removes it.
//
// The submitter (Submitter) is the protocol of `workforce batch FILE
// --queue`, over a batch the command layer opened (batch.OpenFile, each
// entry checked by EntryProblem): it decides what to publish as the local
// pool decides what to run, resolves each task's ref to a commit
// (gitwork.ResolveRef) before anything is published, records each
// publication in the batch's state (Record, tasks/<id>/queue.json) before
// it publishes it, withdraws a task edited or retried and publishes it
// again as another submission, publishes again a task whose message is
// gone with no result, and follows the results (Follow). ReadStatus is
// `batch status --queue`. Like batch, it prints nothing and decides no
// exit status: progress goes to batch.Hooks, and the signals that stop it
// come from the command layer (batch.Signals).
//
// A Key (batch, submission, task) names one publication of a task: a
// task edited or retried is published again as another submission, with
// subjects of its own, so that the result of an older one never counts
// for it.
//
// Delivery. Execution is at least once, results exactly once. A worker
// (Worker) takes a task, sends InProgress every third of the ack wait
// while it works on it, and reports its result before it acks it. A
// worker that dies (or loses the server) stops its heartbeats: after the
// ack wait the server delivers the task to another worker, which runs it
// again, unless its result is out already (a worker that died between its
// report and its ack), then it only acks it. A task whose checkout fails
// is handed back (nak, after Worker.RetryDelay), and reported failed by
// the worker that sees its last delivery. A task that no worker survives
// reaches MaxDeliver, and the next sweep reports it failed. A worker
// stopped once (Drain) takes no more tasks and finishes its own; stopped
// twice (Interrupt), it interrupts them and hands them back, reporting
// nothing, so another worker runs them.
//
// A worker runs a task as the local pool does (batch.Command, RunTask: a
// child `workforce run PERSONA - --events`, here with --sync-committed
// --sync-deletes, and --no-project-personas: the persona is the worker's,
// never one of the clone's project layer) in a clone of the task's repository at the commit the
// submitter resolved (Git.Checkout), then pushes the agent's work as the
// branch workforce/<session-id> (Git.Publish) and puts the branch, the
// commit it started from, the branch's commit and the patch in the result
// (report.Result's published, patch and worker). The attempt of an
// evaluation (batch.Task.Attempt: run --attempt, without the --sync
// flags) is not published: its check runs on the worker, nothing comes
// back into the clone, and its result's patch is its run's, against the
// tree after its setup (fit still drops it when it is too large). Through the local pool
// (batch.Pool) it holds a task with a timeout to it even when the agent
// stopped its run (SIGSTOP), so that such a task frees its slot and stops
// its heartbeats, reported timed_out; and the run ends the processes its
// agent left before its work is synced back, so that none outlives the
// task to read the next one's checkout. Git comes in as
// functions (package gitwork, as GitWork makes them with the worker's
// --git-timeout), which keeps this package to the transport and the
// worker's loop, and testable without a remote. The signals that stop a
// worker come from the command layer too: HandleSignals drains it on the
// first and interrupts its tasks on the next; Summary is its end line.
//
// A task's run gets the environment Worker.Env says: the command layer
// gives the worker's without the queue's settings ($WORKFORCE_QUEUE, the
// NATS tools' NATS_*, the variables of the queue's flags), so that an
// agent does not find the worker's login there.
//
// Nothing of the submitter's environment travels: a message holds the
// batch file's entry, the commit, the ids and the result's subject. The
// workers run the harnesses with their own credentials, and check every
// message as a batch file's entry is checked (check): anyone who may
// publish on the server may make the workers run an agent.
//
// The package imports batch (the task, the runner, the batch's state),
// report (the result), gitwork (resolving a ref, hiding credentials) and
// quote, and nats.go; nothing of the session or harness packages, which
// the child process owns.
package queue
