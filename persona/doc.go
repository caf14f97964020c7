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
// Layers, highest first: the project layer, the persona directories of
// <home>/config.json, the built-in catalog (see Layers). A file in a higher
// layer overrides the persona of the same id below it, or the one named by
// extends, which is looked up in the file's own layer first and then below,
// so two files of one layer can extend each other (and form a cycle, which
// is an error naming it). A file with no lower match must be a complete,
// standalone persona: intent, description and tiers.
//
// A catalog is built for speed (a thousand personas load in a few tens of
// milliseconds, most of it the system's cost of opening files): every layer
// is listed and every file parsed at once, on all processors; most files
// are decoded by a strict JSON v2 fast path, the schema validator explaining
// only the files it declines; and specs share storage. A persona with
// nothing below it is its file's spec itself, an override a shallow copy of
// its base with only what it changes replaced (mergeSpec never writes into
// a map, list or struct it did not make). So the specs of a Catalog, the
// maps and lists they hold, and what Resolve returns are read-only: copy
// before changing them.
//
// Choices the specification leaves open:
//   - A missing sidecar file is a warning; the field is dropped from that
//     file as if it had not been written, together with the mode of the same
//     scope, and the cascade goes on below it.
//   - A sidecar path and inline content in the same scope is an error.
//   - A tier's sidecar channel wins over the top level's even when the top
//     level was set by a higher layer: tiers are the more specific place.
//   - Setting a mode without a path is allowed in an override; after the
//     cascade, each tier's effective mode needs an effective path or content.
//   - Built-in personas must carry sidecars inline (the generator does it).
//   - The user's home directory is never a project: the walk for the
//     project layer stops before it.
package persona
