// Package eval evaluates personas: a case file (Parse: YAML or JSON,
// cases with a task, where it runs, a setup, a check, protected files and
// the assertions of expect; every problem of the file at once, each
// naming the file, the line and the field), the matrix of attempts on top
// of package batch (Load: case × persona × harness × attempt, each a
// batch task whose run is an attempt, run --attempt, keyed on the case,
// the persona's hash and the attempt's number, so that an edited
// persona's attempts run again), the judgement of each attempt (Judge:
// pass, fail or error), the report (Evaluation.Report: per persona, per
// case, per attempt; pass rate and pass@k, PassAtK), what is kept in
// <home>/evals/<id>/ (Evaluation.Keep) and the comparison of two
// evaluations (Compare).
//
// The attempts run as a batch's tasks do (batch.RunLocal, or a queue's
// Submitter over Evaluation.Batch): the command layer chooses which and
// gives the Finish the states they ended with. The package prints
// nothing but on the writers it is given (WriteMatrix, WriteTable,
// WriteComparison) and decides no exit status.
//
// It takes the personas through a Lookup of the caller's (the catalog,
// and the hash of a persona as a run resolves it): nothing of the
// persona, session or run packages is reached from here, nor the command
// line's library.
package eval
