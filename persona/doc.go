// Package persona reads workforce personas: the types, the embedded JSON
// Schema, parsing with line and column in errors, the layer cascade, the
// merge rules and sidecar resolution.
//
// A persona file is validated at every boundary: Parse checks syntax, the
// schema and sidecar path syntax (ValidatePath); Anchor resolves sidecar
// paths against the directory of the file that declared them and checks,
// after symlinks, that they stay inside it; the cascade checks the merged
// persona (a mode needs a path or content, the default tier exists, every
// tier names a harness and a model).
//
// What persona reads personas with but does not own lives below it: the
// workforce home, config.json, the project root and the project layer
// directory (internal/home), the diagnostic with its position
// (internal/diag, which Diagnostic aliases), the containment
// check (internal/pathutil) and an Agent Skill's files (internal/skillmd,
// a package the design's table does not list: persona checks local skills
// at load time and must not import skill). Diagnostic is internal/diag's
// type under persona's name.
//
// Two forms. A flat persona, the form of agentworkforce 4.0.2, sets
// harness, model, systemPrompt and harnessSettings at the top level and has
// no tiers: its one runtime serves every tier (persona@best, @best-value
// and @minimum all run it). A tiered persona sets tiers; its top-level
// runtime fields are then the defaults each tier overrides field by field
// (harnessSettings one level deeper), and when they name both a harness
// and a model they also serve the tiers it does not name (TierNames,
// TierRuntime). The schema describes both.
//
// The fields agentworkforce 4.0.2 added for its cloud (sandbox, cloud,
// useSubscription, integrations, capabilities, memory, relay, onEvent) are
// accepted, kept (CloudFields: show prints them, install copies them, a
// higher layer's value replaces a lower one's) and ignored; a file that
// sets any gets one warning naming them, at the first. mount.enabled false
// means run works in the repository itself, as with --install-in-repo.
// grok parses as a harness (KnownHarnesses); Runnable tells that workforce
// cannot run it yet. Unknown fields stay errors, at their name's line and
// column.
//
// Layers, highest first: the project layer (left out with
// Options.NoProject, as a worker's run in a task's clone does;
// ProjectPersonas still names its files), the persona directories of
// <home>/config.json, the built-in catalog (see Layers). A file in a higher
// layer overrides the persona of the same id below it, or the one named by
// extends, which is looked up in the file's own layer first and then below,
// so two files of one layer can extend each other (and form a cycle, which
// is an error naming it). A file with no lower match must be a complete,
// standalone persona: intent, description and a runtime (a flat one, or
// tiers).
//
// A file that says "inherit": false takes nothing from a lower persona of
// its own id: it shadows that persona whole, and so must be complete on its
// own, which Parse checks (an error naming the file and the field). Absent,
// inherit is true, the original tool's rule. extends is not affected:
// extends of another id names the base explicitly, and such a file never
// took anything from a lower persona of its own id, whatever inherit says;
// extends of the file's own id asks for exactly what inherit false refuses,
// so the two together are an error. workforce import writes "inherit":
// false, since a native agent file means only what it says. A Persona
// names the lower persona of its id it is laid over (Overrides, with
// Inherited listing what comes from below) or hides (Shadows), so that
// show and install can say so.
//
// Flat and tiered files cascade by one rule, a higher layer wins, and
// within one file a tier wins over the top level: a field of the top-level
// runtime that a file sets (harness, model, systemPrompt, a harnessSettings
// key, a sidecar channel or its mode) replaces that field in every tier
// below it, and a tier of the same file may override it again. So a flat
// file laid over a tiered persona runs what it says in every tier, keeping
// only what it does not set (a lower tier's sandboxMode, say); a tier left
// with nothing is dropped, and when none is left the persona is flat. A
// tiered file laid over a flat persona changes only the tiers and fields it
// names; the flat file's runtime stays the default of every tier.
//
// A catalog is built for speed (a thousand personas load in a few tens of
// milliseconds, most of it the system's cost of opening files): every layer
// is listed and every file parsed at once, on all processors; most files
// are decoded by a strict JSON v2 fast path, the schema validator
// (github.com/santhosh-tekuri/jsonschema/v5) explaining only the files it
// declines, and compiling the persona schema only then (its package
// still compiles five meta-schemas as it initialises, 2 to 3.5 ms of
// every start of workforce, not of workforce-launcher, which does not
// link it: the lighter libraries measured in BENCHMARKS.md, issue 44, do
// not list every violation at its line and column); and specs share
// storage. A persona with nothing below it is its file's spec itself, an
// override a shallow copy of its base with only what it changes replaced
// (mergeSpec never writes into a map, list or struct it did not make). So the specs of a Catalog, the
// maps and lists they hold, and what Resolve returns are read-only: copy
// before changing them.
//
// Choices the specification leaves open:
//   - A missing sidecar file is a warning; the field is dropped from that
//     file as if it had not been written, together with the mode of the same
//     scope, and the cascade goes on below it.
//   - A sidecar path and inline content in the same scope is an error.
//   - A tier's sidecar channel wins over the top level's of the same file
//     and of the files below it; a higher layer's top-level channel wins
//     over the tiers below it (the rule above, as for every runtime field).
//   - show and run resolve a tier field by field (Resolved.Origins names
//     the file of each runtime field); a flat persona says so
//     (Resolved.Flat, Spec.Flat).
//   - The cloud objects (integrations, capabilities, memory, relay) are kept
//     as written and checked by the schema, not by the fast path; files that
//     set them are rare.
//   - timeoutSeconds is a whole number of seconds (agentworkforce 4.0.2
//     accepts any positive number), written without a fraction or an
//     exponent: 3.0 and 1e3 are errors at the field as the file names it
//     (tiers.best.harnessSettings.timeoutSeconds).
//   - A persona file is UTF-8: an invalid byte is an error at its line and
//     column, not replaced.
//   - env may not set a loader variable (LoaderVariable, env.go: every LD_
//     variable and glibc's other unsecure ones but TMPDIR): an error at the
//     variable's name, in every layer, so the cascade cannot bring one in.
//     Catalog.EnvRefusals finds them for a run, which refuses rather than
//     fall back to the persona below.
//   - Persona ids, tags and pack file paths are selected with doublestar
//     globs (Select, SelectNames); a pattern that matches nothing is a
//     *NoMatchError, an invalid one a *PatternError. FindFiles finds the
//     files a path or a pattern names (validate, sources list), and
//     Validate checks them over the layers (validate, create).
//   - Setting a mode without a path is allowed in an override; after the
//     cascade, each tier's effective mode needs an effective path or content.
//   - Built-in personas must carry sidecars inline (the generator does it).
//   - The user's home directory is never a project: the walk for the
//     project layer stops before it.
//   - Skills (skill.go): a source is parsed at Parse (ParseSkillSource;
//     an unsupported form or an unsafe local path fails the file, as an
//     unsafe sidecar path does); a local one is anchored like a sidecar
//     (Skill.Path, a symlink leading out of the persona's directory fails
//     the file) and its SKILL.md checked (internal/skillmd). A skill that is
//     missing or whose SKILL.md is invalid is reported in Catalog.Errors
//     and the persona still loads: run refuses it, list and show do not.
//     A built-in persona carries its local skills inline (Skill.Files).
//   - network (Runtime.Network, top level and tier): its words are checked
//     at Parse (internal/netspec; hosts at their line), it merges as a
//     runtime field, and Resolve gives the tier both levels'
//     (Resolved.Network, each with its file). It only narrows the run's
//     policy, which config.json and the flags decide: the run takes each
//     as a narrowing (package session), never as the user's word.
package persona
