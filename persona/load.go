package persona

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/home"
)

// Layer names.
const (
	LayerProject = "project"
	LayerUser    = "user"
	LayerBuiltin = "built-in"
)

// Layer is one place personas are read from. Name is "project", "user",
// "dir:N" (the N-th entry, from 1, of personaDirs in config.json that is not
// the default user directory) or "built-in".
type Layer struct {
	Name string `json:"name"`
	// Dir is the directory read; empty for the built-in layer.
	Dir string `json:"dir,omitempty"`
	// files holds the built-in layer's files.
	files []File
	// paths, when set, are the files of the layer instead of Dir's.
	paths []string
}

// BuiltinLayer returns the built-in layer made of files.
func BuiltinLayer(files []File) Layer {
	return Layer{Name: LayerBuiltin, files: files}
}

// FilesLayer returns a layer made of the given persona files, as
// `workforce validate` lays the files it checks over the other layers.
func FilesLayer(name string, paths []string) Layer {
	return Layer{Name: name, Dir: "(files)", paths: paths}
}

// Options tell Load where to look.
type Options struct {
	// Dir is the working directory the project layer is searched from;
	// empty means the current directory.
	Dir string
	// Home is the workforce home; empty means home.Dir().
	Home string
	// Builtin is the built-in catalog.
	Builtin []File
	// RootMarkers name the files or directories that mark a project root;
	// empty means home.RootMarkers ([".git"]).
	RootMarkers []string
	// NoProject leaves the project layer out: the personas come from the
	// user's layers and the built-in catalog only (a worker's run in the
	// clone of a task's repository, whose project layer is whoever
	// published the task's, not the worker's).
	NoProject bool
}

// Layers returns the layers of opts, highest first: the project layer when
// one is found, the configured persona directories, the built-in catalog.
//
// The project layer is the nearest home.ProjectDir found walking up from
// the working directory to the project root, the first directory holding a
// root marker (home.ProjectLayer). Without a marker the walk goes on to the
// file system root. The user's home directory is never taken for a
// project: its ProjectDir is the default user layer.
func Layers(opts Options) ([]Layer, error) {
	hd, dir, err := opts.paths()
	if err != nil {
		return nil, err
	}
	cfg, err := home.ReadConfig(hd)
	if err != nil {
		return nil, err
	}
	var layers []Layer
	seen := map[string]bool{}
	if p := home.ProjectLayer(dir, opts.markers()); p != "" && !opts.NoProject {
		layers = append(layers, Layer{Name: LayerProject, Dir: p})
		seen[p] = true
	}
	user := home.UserDir(hd)
	for i, d := range cfg.Dirs(hd) {
		if seen[d] {
			continue
		}
		seen[d] = true
		name := fmt.Sprintf("dir:%d", i+1)
		if d == user {
			name = LayerUser
		}
		layers = append(layers, Layer{Name: name, Dir: d})
	}
	layers = append(layers, Layer{Name: LayerBuiltin, files: opts.Builtin})
	return layers, nil
}

// ProjectPersonas returns the project layer of opts's working directory,
// whether or not opts.NoProject leaves it out, and the names of the
// persona files in it, sorted; "" and nil when there is none.
func ProjectPersonas(opts Options) (dir string, files []string, err error) {
	_, wd, err := opts.paths()
	if err != nil {
		return "", nil, err
	}
	dir = home.ProjectLayer(wd, opts.markers())
	if dir == "" {
		return "", nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dir, nil, err
	}
	for _, e := range entries {
		if isPersonaFile(e) {
			files = append(files, e.Name())
		}
	}
	return dir, files, nil
}

func (o Options) paths() (hd, dir string, err error) {
	hd = o.Home
	if hd == "" {
		if hd, err = home.Dir(); err != nil {
			return "", "", err
		}
	}
	dir = o.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", "", err
		}
	}
	if hd, err = filepath.Abs(hd); err != nil {
		return "", "", err
	}
	dir, err = filepath.Abs(dir)
	return hd, dir, err
}

func (o Options) markers() []string {
	if len(o.RootMarkers) > 0 {
		return o.RootMarkers
	}
	return home.RootMarkers
}

// Persona is a persona as the cascade resolved it.
type Persona struct {
	ID string `json:"id"`
	// Layer and Path name the highest file of the persona.
	Layer string `json:"source"`
	Path  string `json:"path"`
	// Spec is the merged persona. Sidecar paths are absolute. It shares
	// storage with the files' specs and other personas: read-only.
	Spec *Spec `json:"spec"`
	// Chain lists the files merged, base first.
	Chain []Origin `json:"chain"`
	// Overrides is the persona of the same id in a lower layer that this
	// one is laid over (the layer and the highest file of it), nil when
	// there is none; Inherited tells what comes from it.
	Overrides *Origin `json:"overrides,omitempty"`
	// Shadows is the persona of the same id in a lower layer that this
	// one hides and takes nothing from: its file says "inherit": false,
	// or extends another id. nil when there is none.
	Shadows *Origin `json:"shadows,omitempty"`
	// files are the specs of Chain, as read.
	files []*Spec
}

// Inherited returns the fields of the persona that come, whole or in part,
// from a file below its own (the persona it overrides or extends), sorted,
// tiers by tier and permissions and mount by list ("claudeMd",
// "description", "env", "permissions.deny", "tiers.best"); nil for a
// persona of one file.
func (p *Persona) Inherited() []string {
	if len(p.files) < 2 {
		return nil
	}
	var out []string
	for field, origins := range p.Provenance() {
		if field == "id" || !slices.ContainsFunc(origins, func(o Origin) bool { return o.File != p.Path }) {
			continue
		}
		parts := strings.SplitN(field, ".", 3)
		group := parts[0]
		if len(parts) > 1 && (group == "tiers" || group == "permissions" || group == "mount") {
			group += "." + parts[1]
		}
		out = append(out, group)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Provenance tells, for every field the persona sets, the files it came
// from. It is computed on demand: listing personas does not need it.
func (p *Persona) Provenance() Provenance {
	prov := Provenance{}
	var scratch Spec
	for i, s := range p.files {
		mergeSpec(&scratch, prov, s, p.Chain[i])
	}
	return prov
}

// Catalog is the result of Load.
type Catalog struct {
	Layers   []Layer    `json:"layers"`
	Personas []*Persona `json:"personas"`
	// Errors are files or overrides that could not be loaded; the
	// personas of other files are still in the catalog. A skill that is
	// missing or whose SKILL.md is invalid is an error too, but its
	// persona loads (run refuses it, naming the problem).
	Errors []*diag.Diagnostic `json:"errors"`
	// Warnings are things ignored while loading, such as missing sidecars.
	Warnings []*diag.Diagnostic `json:"warnings"`
	// files are the persona files read, layer by layer, highest first.
	files []string
	// ids maps every file read to the id it defines, or, for a file that
	// did not parse, the id it names as far as it can be read ("" when
	// none), so that a persona's diagnostics include those of the files
	// that would have been it (DiagnosticsOf).
	ids map[string]string
}

// Files returns the path of every persona file read, layer by layer,
// highest first, those that failed included ("built-in:NAME" for the
// built-in layer's).
func (c *Catalog) Files() []string { return slices.Clone(c.files) }

// Get returns the persona with the given id.
func (c *Catalog) Get(id string) (*Persona, bool) {
	i := sort.Search(len(c.Personas), func(i int) bool { return c.Personas[i].ID >= id })
	if i < len(c.Personas) && c.Personas[i].ID == id {
		return c.Personas[i], true
	}
	return nil, false
}

// IDs returns the ids of the catalog, sorted.
func (c *Catalog) IDs() []string {
	ids := make([]string, len(c.Personas))
	for i, p := range c.Personas {
		ids[i] = p.ID
	}
	return ids
}

// Load reads every layer of opts and resolves the cascade. A file that does
// not parse, an override whose base cannot be found, an extends cycle: each
// is recorded in Catalog.Errors and the other personas still load (a lower
// persona of the same id stays visible). Load returns an error only when
// the layers themselves cannot be determined (a malformed config.json).
func Load(opts Options) (*Catalog, error) {
	layers, err := Layers(opts)
	if err != nil {
		return nil, err
	}
	return LoadLayers(layers), nil
}

// source is one parsed persona file.
type source struct {
	layer   int
	path    string
	data    []byte // the built-in layer's bytes; nil: read path
	builtin bool
	// ld is the directory layer the file was listed in; nil for files
	// named one by one (validate).
	ld *layerDir

	spec *Spec
	// named is the id a file that does not parse names, as far as it
	// can be read (namedID); "" when it parses or names none.
	named string
	err   error
	warns []*diag.Diagnostic
	// problems are errors that leave the persona loaded: a skill that is
	// missing or whose SKILL.md is invalid (run refuses the persona).
	problems []*diag.Diagnostic

	// memo is the persona this file resolves to, once resolved.
	memo result
}

// LoadLayers resolves the cascade over layers, highest first.
func LoadLayers(layers []Layer) *Catalog {
	r := &resolver{layers: layers, byID: make([]map[string]*source, len(layers))}
	cat := &Catalog{Layers: layers, ids: map[string]string{}}
	perLayer, listErrs := readLayers(layers)
	for _, errs := range listErrs {
		cat.Errors = append(cat.Errors, errs...)
	}
	var all []*source
	for i, srcs := range perLayer {
		r.byID[i] = make(map[string]*source, len(srcs))
		for _, s := range srcs {
			cat.files = append(cat.files, s.path)
			cat.ids[s.path] = s.named
			if s.spec != nil {
				cat.ids[s.path] = s.spec.ID
			}
			cat.Warnings = append(cat.Warnings, s.warns...)
			cat.Errors = append(cat.Errors, s.problems...)
			if s.err != nil {
				cat.Errors = append(cat.Errors, diag.Flatten(s.path, s.err)...)
				continue
			}
			if first, dup := r.byID[i][s.spec.ID]; dup {
				cat.Errors = append(cat.Errors, &diag.Diagnostic{File: s.path, Field: "id",
					Message: fmt.Sprintf("persona %q is also defined by %s in the same layer; this file is ignored", s.spec.ID, first.path)})
				continue
			}
			r.byID[i][s.spec.ID] = s
			all = append(all, s)
		}
	}
	personas, errs := r.resolveAll(all)
	cat.Personas = personas
	cat.Errors = append(cat.Errors, errs...)
	sortDiagnostics(cat.Errors)
	sortDiagnostics(cat.Warnings)
	// A file read twice (validate lays files over the layers holding them)
	// is reported once.
	cat.Errors = compactDiagnostics(cat.Errors)
	cat.Warnings = compactDiagnostics(cat.Warnings)
	return cat
}

// compactDiagnostics drops the repeats of a sorted list.
func compactDiagnostics(ds []*diag.Diagnostic) []*diag.Diagnostic {
	return slices.CompactFunc(ds, func(a, b *diag.Diagnostic) bool { return *a == *b })
}

func sortDiagnostics(ds []*diag.Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Message < b.Message
	})
}

// listLayer lists the persona files of a layer, sorted by file name,
// without reading them.
func listLayer(idx int, l Layer) ([]*source, []*diag.Diagnostic) {
	var srcs []*source
	switch {
	case l.Dir == "":
		for _, f := range l.files {
			srcs = append(srcs, &source{layer: idx, path: LayerBuiltin + ":" + f.Name, data: f.Data, builtin: true})
		}
		return srcs, nil
	case l.paths != nil:
		for _, p := range l.paths {
			srcs = append(srcs, &source{layer: idx, path: p})
		}
		return srcs, nil
	}
	entries, err := os.ReadDir(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []*diag.Diagnostic{{File: l.Dir, Message: fmt.Sprintf("cannot read persona directory: %v", err)}}
	}
	ld := &layerDir{dir: filepath.Clean(l.Dir), entries: entries, listed: true}
	ld.realDir, ld.realErr = filepath.EvalSymlinks(ld.dir)
	prefix := ld.dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	n := 0
	for _, e := range entries {
		if isPersonaFile(e) {
			n++
		}
	}
	all := make([]source, 0, n)
	srcs = make([]*source, 0, n)
	for _, e := range entries {
		if isPersonaFile(e) {
			all = append(all, source{layer: idx, path: prefix + e.Name(), ld: ld})
			srcs = append(srcs, &all[len(all)-1])
		}
	}
	return srcs, nil
}

func isPersonaFile(e fs.DirEntry) bool { return strings.HasSuffix(e.Name(), ".json") && !e.IsDir() }

// layerDir is what the files of one directory layer share: the directory,
// clean and absolute, its symlink-free form, and its entries. The listing
// answers whether a sidecar beside its JSON file exists, sparing a system
// call per sidecar.
type layerDir struct {
	dir, realDir string
	realErr      error
	entries      []fs.DirEntry // sorted by name, as os.ReadDir returns them
	listed       bool          // false: entries unknown, ask the file system
	// strict makes a missing sidecar an error (AnchorStrict).
	strict bool
}

// lookup returns the type of the entry name of the directory.
func (d *layerDir) lookup(name string) (fs.FileMode, bool) {
	i, ok := slices.BinarySearchFunc(d.entries, name, func(e fs.DirEntry, name string) int {
		return strings.Compare(e.Name(), name)
	})
	if !ok {
		return 0, false
	}
	return d.entries[i].Type(), true
}

// load reads, parses and anchors one persona file.
func (s *source) load() {
	b := s.data
	fromDisk := b == nil
	if fromDisk {
		// Parse keeps nothing of the bytes it is given, so one buffer
		// serves many files.
		bp := bufPool.Get().(*[]byte)
		defer bufPool.Put(bp)
		var err error
		b, err = readFile(s.path, true, *bp)
		*bp = b
		if err != nil {
			s.err = &diag.Diagnostic{File: s.path, Message: fmt.Sprintf("cannot read: %v", err)}
			return
		}
	}
	s.spec, s.err = Parse(s.path, b)
	if s.err != nil && fromDisk {
		// The single read may have been short; read to the end.
		if whole, err := readFile(s.path, false, nil); err == nil && len(whole) != len(b) {
			b = whole
			s.spec, s.err = Parse(s.path, whole)
		}
	}
	if s.err != nil {
		s.named = namedID(b)
		return
	}
	if d := cloudWarning(s.path, b, s.spec); d != nil {
		s.warns = append(s.warns, d)
	}
	refs := s.spec.SidecarRefs()
	switch {
	case len(refs) == 0:
	case s.builtin:
		s.err = &diag.Diagnostic{File: s.path, Field: refs[0].Field(),
			Message: "a built-in persona must carry its sidecar inline; run go generate"}
	case s.ld == nil:
		var warns []*diag.Diagnostic
		warns, s.err = Anchor(s.spec, s.path)
		s.warns = append(s.warns, warns...)
	case s.ld.realErr != nil:
		s.err = &diag.Diagnostic{File: s.path, Message: fmt.Sprintf("cannot resolve the persona directory: %v", s.ld.realErr)}
	default:
		var warns []*diag.Diagnostic
		warns, s.err = anchorIn(s.spec, refs, s.path, s.ld)
		s.warns = append(s.warns, warns...)
	}
	if s.err == nil && len(s.spec.Skills) > 0 {
		s.anchorSkills()
	}
}

// anchorSkills resolves and checks the file's skills (anchorSkills): a
// problem with a skill is reported and the persona still loads.
func (s *source) anchorSkills() {
	var dir, realDir string
	switch {
	case s.builtin:
	case s.ld != nil:
		dir, realDir = s.ld.dir, s.ld.realDir
	default:
		var err error
		if dir, err = filepath.Abs(filepath.Dir(s.path)); err == nil {
			realDir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			s.err = &diag.Diagnostic{File: s.path, Message: fmt.Sprintf("cannot resolve the persona directory: %v", err)}
			return
		}
	}
	warns, problems, fatal := anchorSkills(s.spec, s.path, dir, realDir, s.builtin)
	s.warns = append(s.warns, warns...)
	s.problems = append(s.problems, problems...)
	if len(fatal) > 0 {
		s.err = fatal
	}
}

// cloudWarning returns the one warning about a file that sets the cloud
// fields of agentworkforce 4.0.2, at the first of them; nil when it sets
// none.
func cloudWarning(file string, data []byte, spec *Spec) *diag.Diagnostic {
	names := spec.CloudFields.Names()
	if len(names) == 0 {
		return nil
	}
	d := &diag.Diagnostic{File: file, Message: fmt.Sprintf("%s: agentworkforce cloud field%s, kept but ignored by workforce",
		strings.Join(names, ", "), map[bool]string{true: "s", false: ""}[len(names) > 1])}
	pos := diag.Positions(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	first := -1
	for _, n := range names {
		if off, ok := pos[diag.KeyPos+n]; ok && (first < 0 || off < first) {
			first = off
		}
	}
	if first >= 0 {
		d.Line, d.Column = diag.Position(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), first)
	}
	return d
}

// namedID returns the string value of the top-level "id" member of data,
// a persona file that does not parse, read as far as the JSON is valid;
// "" when it names none there.
func namedID(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		if key == "id" {
			id, _ := dec.Token()
			s, _ := id.(string)
			return s
		}
		// Skip the value, however deep.
		for depth := 0; ; {
			tok, err := dec.Token()
			if err != nil {
				return ""
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
	return ""
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// readLayers lists every layer and reads and parses every file of every
// layer, all at once: each layer is listed on a goroutine of its own, which
// hands its files to a pool of GOMAXPROCS workers as soon as it has them,
// so that the files of one layer are read while the next is being listed.
func readLayers(layers []Layer) ([][]*source, [][]*diag.Diagnostic) {
	perLayer := make([][]*source, len(layers))
	listErrs := make([][]*diag.Diagnostic, len(layers))
	files := make(chan *source, 512)
	var listers sync.WaitGroup
	for i := range layers {
		listers.Go(func() {
			perLayer[i], listErrs[i] = listLayer(i, layers[i])
			for _, s := range perLayer[i] {
				files <- s
			}
		})
	}
	go func() {
		listers.Wait()
		close(files)
	}()
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for s := range files {
				s.load()
			}
		})
	}
	workers.Wait()
	return perLayer, listErrs
}

// resolveWorkers caps the workers of resolveAll; 0 means GOMAXPROCS, and
// -1 resolves every id one by one (the reference TestParallelResolve
// compares with).
var resolveWorkers = 0

// resolveAll resolves the persona of every id of files, in id order, so
// that messages (which member a cycle starts from) do not depend on map
// order. An id none of whose files extends another id depends only on
// files of its own: those ids, usually nearly all, are resolved first, in
// parallel, each worker taking a run of consecutive ids with a resolver of
// its own (the memo lives on the files, which the workers do not share).
// The others, which may extend each other and form cycles, are then
// resolved one by one, finding the first ones' results in the memo.
func (r *resolver) resolveAll(files []*source) ([]*Persona, []*diag.Diagnostic) {
	ids := make([]string, 0, len(files))
	extendsOther := map[string]bool{}
	for _, s := range files {
		ids = append(ids, s.spec.ID)
		if s.spec.Extends != "" && s.spec.Extends != s.spec.ID {
			extendsOther[s.spec.ID] = true
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var own, linked []int // indexes into ids
	for i, id := range ids {
		if extendsOther[id] || resolveWorkers < 0 {
			linked = append(linked, i)
		} else {
			own = append(own, i)
		}
	}
	found := make([]*Persona, len(ids))
	workers := resolveWorkers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, (len(own)+63)/64))
	parts := make([]*resolver, workers)
	var wg sync.WaitGroup
	for w := range workers {
		part := &resolver{layers: r.layers, byID: r.byID}
		parts[w] = part
		run := own[w*len(own)/workers : (w+1)*len(own)/workers]
		wg.Go(func() {
			for _, i := range run {
				found[i], _ = part.base(0, ids[i])
			}
		})
	}
	wg.Wait()
	for _, i := range linked {
		// A cycle error never reaches this level: the frame where the
		// cycle started turns it into a diagnostic.
		found[i], _ = r.base(0, ids[i])
	}
	personas := make([]*Persona, 0, len(ids))
	for _, p := range found {
		if p != nil {
			personas = append(personas, p)
		}
	}
	// Each resolver reports a file's errors once; across resolvers, keep
	// the first report.
	var errs []*diag.Diagnostic
	seen := map[string]bool{}
	for _, part := range append(parts, r) {
		for _, d := range part.errs {
			if k := d.Error(); !seen[k] {
				seen[k] = true
				errs = append(errs, d)
			}
		}
	}
	return personas, errs
}

type memoKey struct {
	layer int
	id    string
}

type result struct {
	p          *Persona
	err        error
	busy, done bool
}

// resolver resolves the cascade with memoization.
type resolver struct {
	layers []Layer
	byID   []map[string]*source
	stack  []memoKey
	errs   []*diag.Diagnostic
	seen   map[string]bool
}

// CycleError reports an extends cycle.
type CycleError struct {
	Cycle []string // ids, the first repeated at the end
	start memoKey
}

func (e *CycleError) Error() string {
	return "extends cycle: " + strings.Join(e.Cycle, " -> ")
}

func (r *resolver) record(file string, err error) {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for _, d := range diag.Flatten(file, err) {
		k := d.Error()
		if !r.seen[k] {
			r.seen[k] = true
			r.errs = append(r.errs, d)
		}
	}
}

// base finds persona id as seen from layer `from`: the highest file at or
// below it that resolves. A file that fails is recorded and the next lower
// one is tried, except in a cycle: cycle errors propagate instead of
// falling back, so that a cycle fails every member.
func (r *resolver) base(from int, id string) (*Persona, error) {
	for i := from; i < len(r.layers); i++ {
		s := r.byID[i][id]
		if s == nil {
			continue
		}
		p, err := r.resolve(i, s)
		if err == nil {
			return p, nil
		}
		var ce *CycleError
		if errors.As(err, &ce) {
			return nil, err
		}
		r.record(s.path, err)
	}
	return nil, nil
}

func (r *resolver) resolve(layer int, s *source) (*Persona, error) {
	key := memoKey{layer, s.spec.ID}
	m := &s.memo
	if m.busy {
		return nil, r.cycle(key)
	}
	if m.done {
		return m.p, m.err
	}
	m.busy = true
	r.stack = append(r.stack, key)
	m.p, m.err = r.build(layer, s)
	r.stack = r.stack[:len(r.stack)-1]
	m.busy, m.done = false, true
	var ce *CycleError
	if errors.As(m.err, &ce) {
		// Every member of the cycle fails with the same message. The error
		// keeps propagating until it reaches the frame where the cycle
		// started, so that no member falls back to a lower persona.
		m.err = &diag.Diagnostic{File: s.path, Field: "extends", Message: ce.Error()}
		if ce.start != key {
			return nil, ce
		}
	}
	return m.p, m.err
}

func (r *resolver) cycle(key memoKey) error {
	start := 0
	for i, k := range r.stack {
		if k == key {
			start = i
			break
		}
	}
	var ids []string
	for _, k := range r.stack[start:] {
		ids = append(ids, k.id)
	}
	return &CycleError{Cycle: append(ids, key.id), start: key}
}

func (r *resolver) build(layer int, s *source) (*Persona, error) {
	spec := s.spec
	origin := Origin{Layer: r.layers[layer].Name, File: s.path}
	var base *Persona
	var err error
	p := &Persona{ID: spec.ID, Layer: origin.Layer, Path: s.path}
	if (spec.Extends != "" && spec.Extends != spec.ID) || !spec.Inherits() {
		if spec.Extends != "" {
			base, err = r.base(layer, spec.Extends)
			if err != nil {
				return nil, err
			}
			if base == nil {
				return nil, &diag.Diagnostic{File: s.path, Field: "extends",
					Message: fmt.Sprintf("extends unknown persona %q; no layer at or below %s defines it", spec.Extends, origin.Layer)}
			}
		}
		// The persona of the same id below is hidden; resolving it
		// reports its problems, as for every file read.
		if lower, err := r.base(layer+1, spec.ID); err == nil && lower != nil {
			p.Shadows = &Origin{Layer: lower.Layer, File: lower.Path}
		}
	} else {
		base, err = r.base(layer+1, spec.ID)
		if err != nil {
			return nil, err
		}
		if base == nil && spec.Extends != "" {
			return nil, &diag.Diagnostic{File: s.path, Field: "extends",
				Message: fmt.Sprintf("extends %q but no layer below %s defines it", spec.Extends, origin.Layer)}
		}
		if base != nil {
			p.Overrides = &Origin{Layer: base.Layer, File: base.Path}
		}
	}
	var merged *Spec
	if base != nil {
		c := *base.Spec
		merged = &c
		mergeSpec(merged, nil, spec, origin)
		merged.Extends, merged.Schema = "", ""
		p.Chain = append(slices.Clip(base.Chain), origin)
		p.files = append(slices.Clip(base.files), spec)
	} else {
		merged = standalone(spec, origin)
		p.Chain = []Origin{origin}
		p.files = []*Spec{spec}
	}
	p.Spec = merged
	if errs := checkMerged(p, base == nil); len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// checkMerged applies the rules that hold for a whole persona after the
// cascade.
func checkMerged(p *Persona, standalone bool) diag.Errors {
	var errs diag.Errors
	s := p.Spec
	fail := func(field, format string, args ...any) {
		errs = append(errs, &diag.Diagnostic{File: p.Path, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	var tiers []string
	for _, t := range Tiers {
		if s.ServesTier(t) {
			tiers = append(tiers, t)
		}
	}
	if standalone {
		var missing []string
		if s.Intent == "" {
			missing = append(missing, "intent")
		}
		if s.Description == "" {
			missing = append(missing, "description")
		}
		if len(tiers) == 0 && s.Harness == "" && s.Model == "" {
			missing = append(missing, "a runtime (harness and model at the top level, or tiers)")
		}
		if len(missing) > 0 {
			if !s.Inherits() {
				fail("", `"inherit": false takes nothing from a lower persona, so the file must be a whole persona; it lacks %s`, strings.Join(missing, ", "))
				return errs
			}
			fail("", "no lower layer defines persona %q to override, and as a standalone persona it lacks %s", s.ID, strings.Join(missing, ", "))
			return errs
		}
	}
	if len(tiers) == 0 {
		// A flat persona missing a field of its one runtime.
		if s.Harness == "" {
			fail("harness", "missing; want one of %s", strings.Join(KnownHarnesses, ", "))
		}
		if s.Model == "" {
			fail("model", "missing; want the model the harness runs")
		}
		return errs
	}
	if s.DefaultTier != "" && !s.ServesTier(s.DefaultTier) {
		fail("defaultTier", "tier %q is not defined; defined: %s", s.DefaultTier, strings.Join(tiers, ", "))
	}
	for _, t := range tiers {
		if s.tierHarness(t) == "" {
			fail("tiers."+t+".harness", "missing, in the tier and at the top level; want one of %s", strings.Join(KnownHarnesses, ", "))
		}
		if s.tierModel(t) == "" {
			fail("tiers."+t+".model", "missing, in the tier and at the top level; want the model the harness runs")
		}
		for _, c := range Channels {
			sc := effectiveSidecar(s, nil, t, c)
			if sc.Mode != "" && !sc.IsSet() && s.Flat() {
				if t == tiers[0] {
					fail(string(c)+"Mode", "%sMode is set but there is no %s path or %sContent after the cascade", c, c, c)
				}
				continue
			}
			if sc.Mode != "" && !sc.IsSet() {
				field := string(c) + "Mode"
				if tr := s.Tiers[t]; tr != nil {
					if _, m, _ := tr.Sidecars.Fields(c); *m != "" {
						field = "tiers." + t + "." + field
					}
				}
				fail(field, "%sMode is set but tier %s has no %s path or %sContent after the cascade", c, t, c, c)
			}
		}
	}
	if hs := harnessSettingsConflicts(s, tiers); hs != "" {
		fail("", "%s", hs)
	}
	return errs
}

// harnessSettingsConflicts checks the effective harness settings of every
// tier: dangerouslyBypassApprovalsAndSandbox excludes the two-flag form.
func harnessSettingsConflicts(s *Spec, tiers []string) string {
	bypass := s.HarnessSettings != nil && s.HarnessSettings.DangerouslyBypassApprovalsAndSandbox != nil
	for _, rt := range s.Tiers {
		bypass = bypass || (rt != nil && rt.HarnessSettings != nil && rt.HarnessSettings.DangerouslyBypassApprovalsAndSandbox != nil)
	}
	if !bypass {
		return ""
	}
	for _, t := range tiers {
		hs := s.TierRuntime(t).HarnessSettings
		if hs == nil || hs.DangerouslyBypassApprovalsAndSandbox == nil || !*hs.DangerouslyBypassApprovalsAndSandbox {
			continue
		}
		if hs.SandboxMode != "" || hs.ApprovalPolicy != "" || hs.WorkspaceWriteNetworkAccess != nil {
			field := "harnessSettings"
			if rt := s.Tiers[t]; rt != nil && rt.HarnessSettings != nil {
				field = "tiers." + t + ".harnessSettings"
			}
			return fmt.Sprintf("%s: dangerouslyBypassApprovalsAndSandbox excludes sandboxMode, approvalPolicy and workspaceWriteNetworkAccess", field)
		}
	}
	return ""
}
