package report

// Plan is a run before it starts: what `workforce run --dry-run --json`
// prints, and what its text form is printed from.
type Plan struct {
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// HarnessVersion is the installed harness's version, when known;
	// Profile the discovery profile that decides which instruction files
	// are hidden and folded.
	HarnessVersion string `json:"harnessVersion,omitempty"`
	// VersionMeasured says whether HarnessVersion is of a measured
	// release family (major.minor); absent when the version is unknown.
	VersionMeasured *bool     `json:"harnessVersionMeasured,omitempty"`
	Profile         string    `json:"profile,omitempty"`
	Layers          []Origin  `json:"layers"`
	Resolved        *Resolved `json:"resolved"`
	Root            string    `json:"root"`
	Cwd             string    `json:"cwd"`
	Sandbox         string    `json:"sandbox"`
	// Tree is how the sandbox shows the project: "copy" or "overlay"
	// (run --tree); absent for a run in the repository.
	Tree         string        `json:"tree,omitempty"`
	Workdir      string        `json:"workdir"`
	Materialized *Materialized `json:"materialized"`
	Extend       *Extend       `json:"extend,omitempty"`
	Hidden       []string      `json:"hidden"`
	Ignored      []string      `json:"ignored"`
	Readonly     []string      `json:"readonly"`
	Argv         []string      `json:"argv"`
	Env          []string      `json:"env"`
	Sealed       []SealedVar   `json:"sealedEnv"`
	// ConfigFiles are the harness's configuration files, by path.
	ConfigFiles map[string]string `json:"configFiles,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
	InRepo      bool              `json:"installInRepo"`
	Skills      *SkillPlan        `json:"skills,omitempty"`
	// Mapping is what the harness gets for each persona value, and what
	// it refused.
	Mapping *Mapping `json:"mapping"`
	// Confine is the write sandbox of the run.
	Confine *Confine `json:"confine"`
	// Network are the run's network policies, unresolved, each with
	// where it came from; absent for a run without a sandbox.
	Network *NetworkPolicy `json:"network,omitempty"`
}

// Confine is the write sandbox of a run: its mode (on, off, strict),
// whether the harness runs confined, what it may write then, and why a
// run of mode on is not confined.
type Confine struct {
	Mode     string `json:"mode"`
	Confined bool   `json:"confined"`
	// Writable are directories writable with everything below them,
	// Files single files writable in place, Devices the device files it
	// may write and control.
	Writable []string `json:"writable"`
	Files    []string `json:"files,omitempty"`
	Devices  []string `json:"devices"`
	Why      string   `json:"why,omitempty"`
	// Reads is what the harness may not read, and what it may read
	// again, each path with where it came from.
	Reads *Reads `json:"reads,omitempty"`
	// Namespaces says the harness runs in namespaces of its own, its
	// network workforce's proxy alone; NamespacesWhy why a confined
	// harness does not (the network and the user's daemons stay open).
	Namespaces    bool   `json:"namespaces"`
	NamespacesWhy string `json:"namespacesWhy,omitempty"`
	// Network is the resolved network of a harness in namespaces.
	Network *NetworkPlan `json:"network,omitempty"`
	// Launcher is the executable that confines the harness: the
	// workforce-launcher of the same build beside workforce, or
	// workforce itself.
	Launcher string `json:"launcher,omitempty"`
}

// NetworkPlan is the resolved network of a run in namespaces: the mode,
// the allow list and what is always allowed (each entry with its
// origin), the proxy's port inside, the host loopback ports served inside
// on the same port, the API keys brokered (the harness gets a
// placeholder) and the provider keys left out.
type NetworkPlan struct {
	Mode      string   `json:"mode"`
	Allow     []string `json:"allow,omitempty"`
	Always    []string `json:"always,omitempty"`
	ProxyPort int      `json:"proxyPort"`
	Loopback  []int    `json:"loopback,omitempty"`
	Brokered  []string `json:"brokered,omitempty"`
	Dropped   []string `json:"dropped,omitempty"`
}

// Reads is the read policy of a run: the paths denied, those readable
// again below them and, in strict mode, the read roots besides the
// system directories.
type Reads struct {
	Strict bool        `json:"strict,omitempty"`
	Deny   []ReadEntry `json:"deny"`
	Allow  []ReadEntry `json:"allow"`
	Roots  []ReadEntry `json:"roots,omitempty"`
}

// ReadEntry is a path of a read policy and its origin ("default",
// "config.json sandbox.denyRead", "--sandbox-deny-read", "harness claude
// install", ...).
type ReadEntry struct {
	Path   string `json:"path"`
	Origin string `json:"origin"`
}

// Materialized is the instruction file written into the sandbox.
type Materialized struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Text string `json:"text"`
}

// Extend is extend mode's plan: what the harness loads in the real
// directory, which of it is folded into the materialized file, and what
// the sandbox hides.
type Extend struct {
	Real         *Discovery `json:"real"`
	Folded       []string   `json:"folded"`
	LoadedAnyway []string   `json:"loadedAnyway"`
	Extra        []string   `json:"extra"`
	Surfaced     []string   `json:"surfaced"`
	Hide         []string   `json:"hide"`
	Text         string     `json:"text"`
}

// Discovery is what a harness loads when started in a directory.
type Discovery struct {
	Profile  string           `json:"profile"`
	Dir      string           `json:"dir"`
	Root     string           `json:"root"`
	Files    []DiscoveredFile `json:"files"`
	Dropped  []DiscoveredFile `json:"dropped,omitempty"`
	Problems []string         `json:"problems,omitempty"`
	Text     string           `json:"text"`
}

// DiscoveredFile is one instruction file a harness loads.
type DiscoveredFile struct {
	Path      string `json:"path"`
	Canonical string `json:"canonical"`
	Dir       string `json:"dir"`
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

// SealedVar is a variable of the harness's environment that sealing
// rewrote (Value) or dropped.
type SealedVar struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Dropped bool   `json:"dropped,omitempty"`
}

// SkillPlan is where a run's skills come from and land.
type SkillPlan struct {
	Harness string       `json:"harness"`
	Read    []string     `json:"read"`
	Dir     string       `json:"dir"`
	Items   []*SkillItem `json:"items"`
	Notes   []string     `json:"notes,omitempty"`
}

// SkillItem is one skill of a run.
type SkillItem struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Source   string   `json:"source"`
	Kind     string   `json:"kind"`
	Path     string   `json:"path,omitempty"`
	Cache    string   `json:"cache"`
	CacheDir string   `json:"cacheDir,omitempty"`
	Version  string   `json:"version,omitempty"`
	Dest     string   `json:"dest"`
	Replaces []string `json:"replaces,omitempty"`
}
