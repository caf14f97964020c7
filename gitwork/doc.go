// Package gitwork is what a queue task does with git: the submitter
// resolves a task's ref to a commit (ResolveRef), a worker checks that
// commit out from its clone cache (Cache.Checkout) and, once the one-shot
// run has synced the agent's work into the clone, commits that work and
// pushes it as the branch workforce/<session-id> (Publish). Every git
// process is started through internal/git.
//
// # Trust
//
// The url, the ref and the commit are the user's (the batch file's), and
// so are the worker's credentials: fetch and push run Trusted, with the
// user's own git configuration and environment (ssh keys, credential
// helpers). What the agent controls is the clone's working tree (sync-back
// copies its files in) and the commits it made (fetched into the clone as
// the local branch). Nothing it wrote is executed or printed raw:
//
//   - No hook runs anywhere: every Trusted command runs with
//     core.hooksPath=/dev/null and core.fsmonitor=false, so a hooks
//     directory in the working tree is never used, whatever the user's
//     configuration says (core.hooksPath=.githooks is common).
//   - Git never reads the working tree in Publish: it runs there Untrusted
//     (internal/git: no configuration but workforce's, only commands that
//     cannot run a filter or a diff driver). Publish lists the files with
//     ls-files, reads them itself (a file below a symlinked directory is
//     not read: the link is the agent's and may lead out of the tree) and
//     stores them with hash-object --no-filters, so no clean filter,
//     textconv or fsmonitor that the agent's .gitattributes names ever
//     runs, and the commit holds the bytes the agent left. A symlink is
//     committed as a link, never followed; a FIFO, socket or device is
//     left out; a submodule (gitlink) stays as the agent's last commit has
//     it.
//   - The commit object is written by Publish (author and committer
//     "workforce"): no user.name, signing program or commit hook is
//     involved. The branch pushed is refs/heads/<branch>, the branch the
//     caller names (from the session id), never a name the agent chose,
//     and never with force.
//   - File names and git's messages reach errors through internal/quote;
//     a url reaches them through Redact: a credential in a url (userinfo)
//     is never printed, and never written to the clone's configuration
//     (the sandbox copies the clone's .git, so the agent would read it):
//     the clone's origin is the url without its credentials.
//   - Urls and refs starting with "-" are refused, and every command puts
//     "--" before them, so none is read as an option (--upload-pack=...);
//     the ext:: transport never runs (internal/git's TrustedConfig, and
//     CheckURL refuses it, and fd::, whatever $GIT_ALLOW_PROTOCOL says).
//
// # The cache
//
// A Cache holds one bare repository per url (Dir/<hash of the url>.git;
// the full url, credentials included, so that a commit fetched with one
// credential is not handed to a task that gives another). A Checkout
// fetches the commit into it when it lacks it (the commit alone, by its
// id, which servers of protocol v2 allow for reachable commits; failing
// that all branches and tags), under a file lock per repository, then
// clones it with --shared: the task's clone borrows the cache's objects
// through alternates, so a checkout costs the files of one tree, whatever
// the history. For that the cache never collects garbage (gc.auto=0): a
// commit fetched by id is kept by a ref refs/workforce/<commit>, and
// nothing a running task borrows disappears. Removing the cache while no
// task runs is safe.
package gitwork
