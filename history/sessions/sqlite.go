package sessions

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// A read-only reader of the SQLite file format (https://sqlite.org/fileformat.html),
// enough to read the rows of a table: opencode keeps its sessions in a
// SQLite database, and this package imports the standard library only.
// It reads the database file and its write-ahead log as a reader holding
// no lock sees them: the pages of the last transaction committed in the
// WAL over those of the file (the WAL's own checksums and salts say which
// frames are whole and current; the shared-memory index is not read). It
// never writes, so it neither checkpoints nor deletes the WAL, as a SQLite
// library opening the database would. A page that cannot be read, a
// cycle, a row larger than maxRow: an error, or for a row, a count of
// skipped rows.

// sqliteDB is an open database: its file and its WAL, both read through
// io.ReaderAt.
type sqliteDB struct {
	file     io.ReaderAt
	fileSize int64
	wal      io.ReaderAt
	pageSize int
	usable   int              // pageSize less the reserved bytes of each page
	pages    uint32           // the database's size, in pages
	walPages map[uint32]int64 // a page's offset in the WAL, for the pages the WAL holds
	walEnd   int64            // the end of the WAL's last commit frame read
}

const (
	sqliteMagic = "SQLite format 3\x00"
	walMagic    = 0x377f0682
	// maxRow bounds the payload of a row read: the rows read here hold
	// a session's summary, far smaller.
	maxRow = 16 << 20
	// maxDepth bounds the depth of a b-tree.
	maxDepth = 64
)

// errDamaged is wrapped by the errors of a database that does not follow
// the file format.
var errDamaged = errors.New("not a readable SQLite database")

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errDamaged, fmt.Sprintf(format, args...))
}

// openSQLite reads the header of the database file (fileSize bytes) and
// the WAL (walSize bytes; wal may be nil).
func openSQLite(file io.ReaderAt, fileSize int64, wal io.ReaderAt, walSize int64) (*sqliteDB, error) {
	db := &sqliteDB{file: file, fileSize: fileSize}
	if wal != nil && walSize >= 32 {
		if err := db.readWAL(wal, walSize); err != nil {
			return nil, err
		}
	}
	if db.pageSize == 0 {
		// No WAL: the file's header says the page size.
		var h [100]byte
		if fileSize < 100 {
			return nil, damaged("the file has no header")
		}
		if _, err := file.ReadAt(h[:], 0); err != nil {
			return nil, err
		}
		ps, err := pageSize(h[:])
		if err != nil {
			return nil, err
		}
		db.pageSize = ps
	}
	if db.pages == 0 {
		db.pages = 1 // to read the header; set below
	}
	p1, err := db.page(1)
	if err != nil {
		return nil, err
	}
	h := p1[:100]
	if string(h[:16]) != sqliteMagic {
		return nil, damaged("no SQLite header")
	}
	if ps, err := pageSize(h); err != nil || ps != db.pageSize {
		return nil, damaged("the page size of the header and of the WAL differ")
	}
	if enc := binary.BigEndian.Uint32(h[56:]); enc > 1 {
		return nil, damaged("text encoding %d: only UTF-8 is read", enc)
	}
	db.usable = db.pageSize - int(h[20])
	if db.usable < 480 {
		return nil, damaged("%d usable bytes a page", db.usable)
	}
	if db.walPages == nil {
		// Not set by a commit in the WAL: the header's count when it is
		// valid, else the file's size.
		n := binary.BigEndian.Uint32(h[28:])
		if n == 0 || binary.BigEndian.Uint32(h[24:]) != binary.BigEndian.Uint32(h[92:]) {
			n = uint32(min(fileSize/int64(db.pageSize), math.MaxUint32))
		}
		db.pages = max(n, 1)
	}
	// No more pages than the file and the WAL hold: a damaged count
	// would make every bound below useless.
	held := uint32(min(fileSize/int64(db.pageSize), math.MaxUint32))
	for n := range db.walPages {
		held = max(held, n)
	}
	db.pages = min(db.pages, max(held, 1))
	return db, nil
}

// pageSize reads the page size of a database header.
func pageSize(h []byte) (int, error) {
	if string(h[:16]) != sqliteMagic {
		return 0, damaged("no SQLite header")
	}
	ps := int(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return 0, damaged("page size %d", ps)
	}
	return ps, nil
}

// readWAL reads the frames of the WAL that belong to committed
// transactions: from the start, while each frame carries the header's
// salts and its checksum holds, up to the last commit frame.
func (db *sqliteDB) readWAL(wal io.ReaderAt, size int64) error {
	var h [32]byte
	if _, err := wal.ReadAt(h[:], 0); err != nil {
		return err
	}
	magic := binary.BigEndian.Uint32(h[:])
	if magic&^1 != walMagic {
		return nil // not a WAL (or one not yet written): the file alone
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if magic&1 == 1 {
		order = binary.BigEndian
	}
	ps := int(binary.BigEndian.Uint32(h[8:]))
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return nil
	}
	s1, s2 := walChecksum(order, 0, 0, h[:24])
	if s1 != binary.BigEndian.Uint32(h[24:]) || s2 != binary.BigEndian.Uint32(h[28:]) {
		return nil // a header being written: the file alone
	}
	salt := h[16:24]
	committed := map[uint32]int64{}
	pending := map[uint32]int64{}
	var pages uint32
	var end int64
	frame := make([]byte, 24+ps)
	for off := int64(32); off+int64(len(frame)) <= size; off += int64(len(frame)) {
		if _, err := wal.ReadAt(frame, off); err != nil {
			return err
		}
		if !bytes.Equal(frame[8:16], salt) {
			break
		}
		s1, s2 = walChecksum(order, s1, s2, frame[:8])
		s1, s2 = walChecksum(order, s1, s2, frame[24:])
		if s1 != binary.BigEndian.Uint32(frame[16:]) || s2 != binary.BigEndian.Uint32(frame[20:]) {
			break
		}
		pgno := binary.BigEndian.Uint32(frame[:])
		if pgno == 0 {
			break
		}
		pending[pgno] = off + 24
		if commit := binary.BigEndian.Uint32(frame[4:]); commit != 0 {
			for k, v := range pending {
				committed[k] = v
			}
			clear(pending)
			pages, end = commit, off+int64(len(frame))
		}
	}
	if pages == 0 {
		return nil // nothing committed: the file alone
	}
	db.wal, db.pageSize, db.pages, db.walPages, db.walEnd = wal, ps, pages, committed, end
	return nil
}

// walChecksum continues the WAL checksum s1, s2 over b (a multiple of 8
// bytes), its words in order.
func walChecksum(order binary.ByteOrder, s1, s2 uint32, b []byte) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s1 += order.Uint32(b[i:]) + s2
		s2 += order.Uint32(b[i+4:]) + s1
	}
	return s1, s2
}

// page returns page n (from 1).
func (db *sqliteDB) page(n uint32) ([]byte, error) {
	if n == 0 || n > db.pages {
		return nil, damaged("page %d of %d", n, db.pages)
	}
	p := make([]byte, db.pageSize)
	if off, ok := db.walPages[n]; ok {
		if _, err := db.wal.ReadAt(p, off); err != nil {
			return nil, fmt.Errorf("page %d in the WAL: %w", n, err)
		}
		return p, nil
	}
	off := int64(n-1) * int64(db.pageSize)
	if off+int64(db.pageSize) > db.fileSize {
		return nil, damaged("page %d is beyond the end of the file", n)
	}
	if _, err := db.file.ReadAt(p, off); err != nil {
		return nil, fmt.Errorf("page %d: %w", n, err)
	}
	return p, nil
}

// varint reads a SQLite variable-length integer from b: its value and
// length, 0 when b ends first.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}

// rowFunc is called with each row of a table: its rowid and its
// record's values (nil, int64, float64, string or []byte), or the error
// that made the row unreadable (its values nil).
type rowFunc func(rowid int64, values []any, err error) error

// rows calls fn with each row of the table b-tree rooted at page root,
// in rowid order. An error of a page stops the walk; an error of a row
// goes to fn.
func (db *sqliteDB) rows(root uint32, fn rowFunc) error {
	seen := map[uint32]bool{}
	return db.walk(root, 0, seen, fn)
}

func (db *sqliteDB) walk(n uint32, depth int, seen map[uint32]bool, fn rowFunc) error {
	if depth > maxDepth {
		return damaged("a b-tree deeper than %d", maxDepth)
	}
	if seen[n] {
		return damaged("page %d is reached twice", n)
	}
	seen[n] = true
	p, err := db.page(n)
	if err != nil {
		return err
	}
	h := 0
	if n == 1 {
		h = 100
	}
	if len(p) < h+12 {
		return damaged("page %d is too short", n)
	}
	kind := p[h]
	cells := int(binary.BigEndian.Uint16(p[h+3:]))
	ptrs := h + 8
	if kind == 0x05 {
		ptrs = h + 12
	} else if kind != 0x0d {
		return damaged("page %d is of type %#x, not a table b-tree page", n, kind)
	}
	if ptrs+2*cells > len(p) {
		return damaged("page %d: %d cells do not fit", n, cells)
	}
	for i := 0; i < cells; i++ {
		off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
		if off < ptrs+2*cells || off >= db.usable {
			return damaged("page %d: cell %d at %d", n, i, off)
		}
		cell := p[off:db.usable]
		if kind == 0x05 {
			if len(cell) < 4 {
				return damaged("page %d: cell %d is cut", n, i)
			}
			if err := db.walk(binary.BigEndian.Uint32(cell), depth+1, seen, fn); err != nil {
				return err
			}
			continue
		}
		rowid, values, err := db.leafCell(cell, seen)
		if err := fn(rowid, values, err); err != nil {
			return err
		}
	}
	if kind == 0x05 {
		return db.walk(binary.BigEndian.Uint32(p[h+8:]), depth+1, seen, fn)
	}
	return nil
}

// leafCell reads a cell of a table leaf page: its rowid and its record,
// the part of its payload on overflow pages included (seen: the pages
// read so far, of which none is read twice).
func (db *sqliteDB) leafCell(cell []byte, seen map[uint32]bool) (int64, []any, error) {
	size, n := varint(cell)
	if n == 0 {
		return 0, nil, damaged("a cell is cut")
	}
	cell = cell[n:]
	rowid, n := varint(cell)
	if n == 0 {
		return 0, nil, damaged("a cell is cut")
	}
	cell = cell[n:]
	if size > maxRow {
		return int64(rowid), nil, fmt.Errorf("a row of %d bytes is over the limit of %d", size, maxRow)
	}
	payload, err := db.payload(cell, int(size), seen)
	if err != nil {
		return int64(rowid), nil, err
	}
	values, err := record(payload)
	return int64(rowid), values, err
}

// payload returns the size bytes of a cell's payload that starts at
// cell: the local part, then the overflow pages, none of them in seen
// (each page of a database belongs to one b-tree or chain: the pages a
// walk reads are bounded by the database's).
func (db *sqliteDB) payload(cell []byte, size int, seen map[uint32]bool) ([]byte, error) {
	u := db.usable
	x := u - 35
	local := size
	if size > x {
		m := (u-12)*32/255 - 23
		local = m + (size-m)%(u-4)
		if local > x {
			local = m
		}
	}
	if local > len(cell) {
		return nil, damaged("a cell's payload is cut")
	}
	if int64(size-local) > int64(db.pages)*int64(u-4) {
		return nil, damaged("a payload of %d bytes is larger than the database", size)
	}
	out := make([]byte, 0, size)
	out = append(out, cell[:local]...)
	if local == size {
		return out, nil
	}
	if len(cell) < local+4 {
		return nil, damaged("a cell's overflow page is cut")
	}
	next := binary.BigEndian.Uint32(cell[local:])
	for len(out) < size {
		if next == 0 {
			return nil, damaged("an overflow chain ends early")
		}
		if seen[next] {
			return nil, damaged("overflow page %d is reached twice", next)
		}
		seen[next] = true
		p, err := db.page(next)
		if err != nil {
			return nil, err
		}
		next = binary.BigEndian.Uint32(p)
		out = append(out, p[4:min(u, 4+size-len(out))]...)
	}
	return out, nil
}

// record decodes a record (https://sqlite.org/fileformat.html#record_format).
func record(b []byte) ([]any, error) {
	hsize, n := varint(b)
	if n == 0 || hsize > uint64(len(b)) || hsize < uint64(n) {
		return nil, damaged("a record's header is cut")
	}
	header, body := b[n:hsize], b[hsize:]
	var values []any
	for len(header) > 0 {
		t, n := varint(header)
		if n == 0 {
			return nil, damaged("a record's header is cut")
		}
		header = header[n:]
		var size int
		switch {
		case t == 0, t == 8, t == 9:
			size = 0
		case t <= 4:
			size = int(t)
		case t == 5:
			size = 6
		case t == 6, t == 7:
			size = 8
		case t >= 12:
			if (t-12)/2 > uint64(len(body)) {
				return nil, damaged("a record's value is cut")
			}
			size = int((t - 12) / 2)
		default:
			return nil, damaged("serial type %d", t)
		}
		if size > len(body) {
			return nil, damaged("a record's value is cut")
		}
		v := body[:size]
		body = body[size:]
		switch {
		case t == 0:
			values = append(values, nil)
		case t == 8:
			values = append(values, int64(0))
		case t == 9:
			values = append(values, int64(1))
		case t <= 6:
			// A big-endian two's-complement integer of size bytes.
			var x int64
			if v[0]&0x80 != 0 {
				x = -1
			}
			for _, c := range v {
				x = x<<8 | int64(c)
			}
			values = append(values, x)
		case t == 7:
			values = append(values, math.Float64frombits(binary.BigEndian.Uint64(v)))
		case t%2 == 0:
			values = append(values, bytes.Clone(v))
		default:
			values = append(values, string(v))
		}
	}
	return values, nil
}

// table is a table of the database: its root page and its columns, in
// order, with the index of its rowid alias (an INTEGER PRIMARY KEY
// column, stored as NULL) or -1.
type table struct {
	root    uint32
	columns []string
	alias   int
}

// table finds a table by name in the schema.
func (db *sqliteDB) table(name string) (*table, error) {
	var found *table
	err := db.rows(1, func(_ int64, v []any, err error) error {
		if err != nil || len(v) < 5 || found != nil {
			return nil
		}
		kind, _ := v[0].(string)
		tname, _ := v[1].(string)
		root, _ := v[3].(int64)
		sql, _ := v[4].(string)
		if kind != "table" || !strings.EqualFold(tname, name) {
			return nil
		}
		if root <= 0 || root > math.MaxUint32 {
			return damaged("table %s has root page %d", name, root)
		}
		cols, alias := columns(sql)
		found = &table{root: uint32(root), columns: cols, alias: alias}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("no table %s", name)
	}
	return found, nil
}

// columns reads the column names of a CREATE TABLE statement, and the
// index of its rowid alias (-1 when none): the first word of each
// definition between the outer parentheses, table constraints aside.
func columns(sql string) ([]string, int) {
	i, j := strings.IndexByte(sql, '('), strings.LastIndexByte(sql, ')')
	if i < 0 || j < i {
		return nil, -1
	}
	var defs []string
	depth, start := 0, i+1
	var quote byte
	for k := i + 1; k < j; k++ {
		c := sql[k]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '[':
			quote = ']'
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			defs = append(defs, sql[start:k])
			start = k + 1
		}
	}
	defs = append(defs, sql[start:j])
	var cols []string
	alias := -1
	for _, d := range defs {
		name, quoted, rest := firstToken(d)
		if name == "" {
			continue
		}
		if !quoted {
			switch strings.ToUpper(name) {
			case "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
				continue
			}
		}
		words := strings.Fields(rest)
		if len(words) > 0 && strings.EqualFold(words[0], "INTEGER") && strings.Contains(strings.ToUpper(rest), "PRIMARY KEY") {
			alias = len(cols)
		}
		cols = append(cols, name)
	}
	return cols, alias
}

// firstToken splits the first word of a column definition off: a name
// in quotes ("", “, [] or ”), or up to a space or a parenthesis.
func firstToken(def string) (name string, quoted bool, rest string) {
	def = strings.TrimSpace(def)
	if def == "" {
		return "", false, ""
	}
	if end := map[byte]byte{'"': '"', '`': '`', '[': ']', '\'': '\''}[def[0]]; end != 0 {
		if i := strings.IndexByte(def[1:], end); i >= 0 {
			return def[1 : 1+i], true, def[2+i:]
		}
		return def[1:], true, ""
	}
	i := strings.IndexAny(def, " \t\n\r(")
	if i < 0 {
		return def, false, ""
	}
	return def[:i], false, def[i:]
}

// each calls fn with each row of table t as a map from column name to
// value; a column a row lacks (added to the table after the row was
// written) is absent. A row that cannot be read goes to fn as its error.
func (db *sqliteDB) each(t *table, fn func(row map[string]any, err error) error) error {
	return db.rows(t.root, func(rowid int64, values []any, err error) error {
		if err != nil {
			return fn(nil, err)
		}
		row := make(map[string]any, len(t.columns))
		for i, c := range t.columns {
			if i < len(values) {
				row[c] = values[i]
			}
		}
		if t.alias >= 0 {
			row[t.columns[t.alias]] = rowid
		}
		return fn(row, nil)
	})
}
