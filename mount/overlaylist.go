package mount

// The overlay's listing cache (issue 44): findWhiteouts lists every
// directory of the project, because the default excludes and the hidden
// instruction file names apply at every level. Like git's untracked
// cache, the listing cache keeps, for each directory, its identity and
// times and what listForOverlay found there, so that the next run of the
// same project with the same rules pays one lstat per directory instead
// of open, getdents and close; a directory whose stat differs is listed
// again.
//
// Why a stale cache cannot show the agent a file the rules hide: what
// listForOverlay decides for a directory depends on the rules (part of
// the cache's key) and on the names and types of the directory's entries,
// nothing else. An entry is made, removed, renamed or replaced only by a
// change of its directory, which moves the directory's modification and
// change times; a directory replaced by another has another inode. A
// change made within the file system clock's granularity of the listing
// could keep the times the listing saw: a directory changed less than
// racyMargin before the listing began is never cached (git's racy-index
// rule), and its times are taken before its entries are read. The times
// are trusted only on file systems whose timestamps this machine's kernel
// makes (listingFS), and for the directories of the root's file system:
// never on a network file system, whose server's clock may differ and
// whose attributes the client caches. Whatever cannot be read as a whole and checked (a
// missing, damaged, foreign or older cache) is ignored: the listing is
// then the full one, never an error.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/internal/home"
)

// listingMagic starts a listing cache file. listingVersion is part of the
// rules' fingerprint: change it whenever listForOverlay decides
// differently for the same names and rules, so that older caches are not
// read.
const (
	listingMagic   = "wflist\x00\x01"
	listingVersion = "1"
)

// racyMargin is how much older than the listing's start a directory's
// modification and change times must be for the directory to be cached:
// far more than a file system clock's tick (the kernel's coarse clock,
// 1 to 10 ms) behind the clock the start is read from.
const racyMargin = 2 * time.Second

// dirID is what the cache knows a directory by: its device and inode,
// and its modification and change times in nanoseconds.
type dirID struct {
	dev, ino     uint64
	mtime, ctime int64
}

// idOf is the dirID of st.
func idOf(st *unix.Stat_t) dirID {
	return dirID{dev: uint64(st.Dev), ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// cachedDir is one directory of the cache: its identity when it was
// listed, and what the listing found there (paths relative to the root).
type cachedDir struct {
	id dirID
	ls overlayListing
}

// listingCache is the listing cache of one project for one set of rules:
// what the file held (old), and what this listing found that can be
// cached (fresh), written back by save.
type listingCache struct {
	file string
	sum  [32]byte
	// start is when the listing began; margin racyMargin (smaller in
	// tests). dev is the root's device: only the directories of the
	// root's file system are cached (a file system mounted inside the
	// project may be one whose times are not to be trusted).
	start  time.Time
	margin time.Duration
	dev    uint64
	old    map[string]*cachedDir

	mu    sync.Mutex
	fresh map[string]*cachedDir
	// added is how many directories of fresh were read by this listing.
	added int
}

// openListingCache returns the listing cache of the project root in the
// workforce home dir, for the rules r and the git directories gd, with
// what its file holds when that was written for the same rules; nil when
// there is no home or root's file system's times cannot be trusted
// (listingFS).
func openListingCache(dir, root string, r *Rules, gd gitDirs) *listingCache {
	var st unix.Stat_t
	if dir == "" || !listingFS(root) || unix.Stat(root, &st) != nil {
		return nil
	}
	name := sha256.Sum256([]byte(root))
	c := &listingCache{
		file:  filepath.Join(home.OverlayListings(dir), hex.EncodeToString(name[:16])),
		sum:   rulesSum(root, r, gd),
		start: time.Now(), margin: racyMargin, dev: uint64(st.Dev),
		fresh: map[string]*cachedDir{},
	}
	if data, err := os.ReadFile(c.file); err == nil {
		c.old, _ = parseListing(data, c.sum)
	}
	return c
}

// rulesSum is the fingerprint of what listForOverlay decides by besides
// the directories' entries: the format's version, the root, the rules'
// patterns and hidden names and paths, and the git directories.
func rulesSum(root string, r *Rules, gd gitDirs) [32]byte {
	h := sha256.New()
	field := func(ss ...string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(ss)))])
		for _, s := range ss {
			h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
			h.Write([]byte(s))
		}
	}
	field(listingVersion, root)
	field(r.ignLines...)
	field(r.roLines...)
	field(r.hide...)
	field(r.hidePaths...)
	field(gd...)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// list returns what listForOverlay finds in the directory rel of root:
// the cache's entry when the directory's identity and times are those it
// was listed with, else a new listing, which the cache keeps when the
// directory was not changed too recently. read says the directory was
// read. A nil cache lists.
func (c *listingCache) list(ctx context.Context, root, rel string, r *Rules, gd gitDirs) (ls overlayListing, read bool, err error) {
	if c != nil {
		if d := c.old[rel]; d != nil {
			if err := ctx.Err(); err != nil {
				return ls, false, err
			}
			var st unix.Stat_t
			if unix.Lstat(filepath.Join(root, filepath.FromSlash(rel)), &st) == nil &&
				st.Mode&unix.S_IFMT == unix.S_IFDIR && idOf(&st) == d.id {
				c.mu.Lock()
				c.fresh[rel] = d
				c.mu.Unlock()
				return d.ls, false, nil
			}
		}
	}
	ls, st, err := listForOverlay(ctx, root, rel, r, gd)
	if err != nil || c == nil {
		return ls, true, err
	}
	if st != nil && c.settled(st) {
		c.mu.Lock()
		c.fresh[rel] = &cachedDir{id: idOf(st), ls: ls}
		c.added++
		c.mu.Unlock()
	}
	return ls, true, nil
}

// settled reports whether the directory st may be cached: it is on the
// root's file system, and was last changed at least the margin before
// the listing began. A change after the listing then gives it other
// times: the file system's clock has moved past the times the listing
// saw (the margin is far more than its tick).
func (c *listingCache) settled(st *unix.Stat_t) bool {
	limit := c.start.Add(-c.margin).UnixNano()
	return uint64(st.Dev) == c.dev && st.Mtim.Nano() < limit && st.Ctim.Nano() < limit
}

// save writes what this listing cached into a new file that replaces the
// old one (a rename: a reader sees one or the other), when it is worth a
// write: when there was no valid file, or this listing read and cached
// a good part of the directories (worthSaving). A directory the file
// holds with other times is only listed again: sync-back changes the
// directories of what it writes back, and rewriting the whole file for
// them on every run would cost more than listing them. What goes wrong
// is left: the next listing lists more.
func (c *listingCache) save() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !worthSaving(c.added, len(c.fresh), c.old != nil) {
		return
	}
	dir := filepath.Dir(c.file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".listing-*")
	if err != nil {
		return
	}
	_, err = f.Write(encodeListing(c.fresh, c.sum))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.file)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// worthSaving reports whether a listing that read and cached added of
// the dirs directories it covered is worth writing the cache for: any
// when there was no valid cache (had false), else one in 32 of them, or
// 256.
func worthSaving(added, dirs int, had bool) bool {
	return added > 0 && (!had || added*32 >= dirs || added >= 256)
}

// encodeListing is the cache file of dirs for the rules' fingerprint sum:
// listingMagic, sum, the number of directories, each directory (its path,
// device, inode, times, and the base names of what it hides, its links,
// read-only files, nested .git files and directories to list), and the
// SHA-256 of all that.
func encodeListing(dirs map[string]*cachedDir, sum [32]byte) []byte {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	names := func(paths []string) {
		b = binary.AppendUvarint(b, uint64(len(paths)))
		for _, p := range paths {
			str(path.Base(p))
		}
	}
	b = append(b, listingMagic...)
	b = append(b, sum[:]...)
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for _, rel := range slices.Sorted(maps.Keys(dirs)) {
		d := dirs[rel]
		str(rel)
		b = binary.AppendUvarint(b, d.id.dev)
		b = binary.AppendUvarint(b, d.id.ino)
		b = binary.AppendVarint(b, d.id.mtime)
		b = binary.AppendVarint(b, d.id.ctime)
		for _, l := range d.ls.lists() {
			names(*l)
		}
	}
	check := sha256.Sum256(b)
	return append(b, check[:]...)
}

// lists are the lists of a directory's listing, in the cache file's
// order.
func (ls *overlayListing) lists() []*[]string {
	return []*[]string{&ls.hide, &ls.links, &ls.readonly, &ls.dotgits, &ls.dirs}
}

// errListing is the error of a cache file that is not one for the rules
// asked (damaged, foreign, of another format or other rules).
var errListing = errors.New("not a listing cache of these rules")

// parseListing reads a cache file written by encodeListing for the rules'
// fingerprint sum; any other content is errListing.
func parseListing(data []byte, sum [32]byte) (map[string]*cachedDir, error) {
	head := len(listingMagic) + len(sum)
	if len(data) < head+sha256.Size {
		return nil, errListing
	}
	body, check := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], check) ||
		string(body[:len(listingMagic)]) != listingMagic || !bytes.Equal(body[len(listingMagic):head], sum[:]) {
		return nil, errListing
	}
	p := listingParser{b: body[head:]}
	n := p.count()
	dirs := make(map[string]*cachedDir, n)
	for range n {
		rel := p.str()
		if p.err == nil && !listingPath(rel) {
			p.err = errListing
		}
		d := &cachedDir{id: dirID{dev: p.uvarint(), ino: p.uvarint(), mtime: p.varint(), ctime: p.varint()}}
		for _, l := range d.ls.lists() {
			*l = p.names(rel)
		}
		if p.err != nil {
			return nil, p.err
		}
		if _, dup := dirs[rel]; dup {
			return nil, errListing
		}
		dirs[rel] = d
	}
	if p.err != nil || len(p.b) != 0 {
		return nil, errListing
	}
	return dirs, nil
}

// listingParser reads the fields of a cache file's body; its first
// error stays, every read after it returning zero.
type listingParser struct {
	b   []byte
	err error
}

func (p *listingParser) uvarint() uint64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.err = errListing
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *listingParser) varint() int64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.err = errListing
		return 0
	}
	p.b = p.b[n:]
	return v
}

// count reads a number of things each at least a byte long: never more
// than the bytes left.
func (p *listingParser) count() int {
	v := p.uvarint()
	if v > uint64(len(p.b)) {
		p.err = errListing
		return 0
	}
	return int(v)
}

func (p *listingParser) str() string {
	n := p.uvarint()
	if p.err != nil {
		return ""
	}
	if n > uint64(len(p.b)) {
		p.err = errListing
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

// names reads a list of base names of entries of the directory rel, as
// paths relative to the root.
func (p *listingParser) names(rel string) []string {
	n := p.count()
	var out []string
	for range n {
		name := p.str()
		if p.err != nil {
			return nil
		}
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
			p.err = errListing
			return nil
		}
		out = append(out, path.Join(rel, name))
	}
	return out
}

// listingPath reports whether rel is a directory's path in a cache file:
// "" for the root, else relative, with slashes, clean.
func listingPath(rel string) bool {
	return rel == "" || (!strings.ContainsRune(rel, 0) && !path.IsAbs(rel) && path.Clean(rel) == rel && rel != "." &&
		rel != ".." && !strings.HasPrefix(rel, "../"))
}
