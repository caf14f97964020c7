//go:build !linux

package mount

// ReadWatch watches the real project of an overlay sandbox while its
// harness runs (readwatch_linux.go); the overlay is Linux's alone.
type ReadWatch struct{}

// ReadReport is what a ReadWatch saw.
type ReadReport struct {
	// Changed are the files read during the run and changed in the real
	// tree afterwards, which the agent did not change itself.
	Changed []string
	// Appeared are the entries the sandbox's rules hide that the real
	// tree gained during the run.
	Appeared []Appeared
	// Incomplete, when set, says why some reads or changes may have gone
	// unseen.
	Incomplete string
}

// Appeared is an entry the rules hide that the real tree gained during
// the run.
type Appeared struct {
	Path string
	Dir  bool
	Read bool
}

// WatchReads returns nil: there is no overlay sandbox here.
func (s *Sandbox) WatchReads() *ReadWatch { return nil }

// Stop reports nothing.
func (w *ReadWatch) Stop() ReadReport { return ReadReport{} }

// Begin does nothing.
func (w *ReadWatch) Begin() {}
