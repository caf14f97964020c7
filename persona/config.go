package persona

import "github.com/seed-3bc194a6/workforce/internal/home"

// The workforce home and its config.json moved to internal/home; these
// forward to it for the callers that have not moved yet.

// HomeEnv is the environment variable naming the workforce home directory.
//
// Deprecated: use home.Env; kept until the command layer moves.
const HomeEnv = home.Env

// ProjectDir is the project layer's directory.
//
// Deprecated: use home.ProjectDir; kept until the command layer moves.
const ProjectDir = home.ProjectDir

// DefaultRootMarkers mark a project root.
//
// Deprecated: use home.RootMarkers; kept until the command layer moves.
var DefaultRootMarkers = home.RootMarkers

// Home returns the workforce home.
//
// Deprecated: use home.Dir; kept until the command layer moves.
func Home() (string, error) { return home.Dir() }

// Config is <home>/config.json.
//
// Deprecated: use home.Config; kept until the command layer moves.
type Config = home.Config

// DefaultUserDir returns the default user persona directory of home.
//
// Deprecated: use home.UserDir; kept until the command layer moves.
func DefaultUserDir(dir string) string { return home.UserDir(dir) }

// ReadConfig reads <home>/config.json.
//
// Deprecated: use home.ReadConfig; kept until the command layer moves.
func ReadConfig(dir string) (*home.Config, error) { return home.ReadConfig(dir) }

// WriteConfig writes <home>/config.json.
//
// Deprecated: use home.WriteConfig; kept until the command layer moves.
func WriteConfig(dir string, c *home.Config) error { return home.WriteConfig(dir, c) }
