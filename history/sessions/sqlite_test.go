package sessions

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// opencodeImage returns the fixture's opencode database and WAL.
func opencodeImage(t testing.TB) (db, wal []byte) {
	t.Helper()
	s, _ := fixture(t, Opencode)
	db, err := os.ReadFile(filepath.Join(s.Dir, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, err = os.ReadFile(filepath.Join(s.Dir, "opencode.db-wal"))
	if err != nil {
		t.Fatal(err)
	}
	return db, wal
}

func open(t testing.TB, db, wal []byte) *sqliteDB {
	t.Helper()
	var w *bytes.Reader
	if wal != nil {
		w = bytes.NewReader(wal)
	}
	var d *sqliteDB
	var err error
	if w != nil {
		d, err = openSQLite(bytes.NewReader(db), int64(len(db)), w, int64(len(wal)))
	} else {
		d, err = openSQLite(bytes.NewReader(db), int64(len(db)), nil, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkpoint returns db with the committed pages of its WAL written into
// it, as a checkpoint leaves the file.
func checkpoint(t *testing.T, db, wal []byte) []byte {
	t.Helper()
	d := open(t, db, wal)
	out := make([]byte, int(d.pages)*d.pageSize)
	copy(out, db)
	for n := uint32(1); n <= d.pages; n++ {
		p, err := d.page(n)
		if err != nil {
			t.Fatal(err)
		}
		copy(out[int(n-1)*d.pageSize:], p)
	}
	// The header's page count, valid for its change counter.
	binary.BigEndian.PutUint32(out[28:], d.pages)
	copy(out[92:96], out[24:28])
	return out
}

// The rows of the fixture's tables and the longest data of each, as
// SQLite itself (the sqlite3 library) reads the fixture.
var fixtureTables = []struct {
	name    string
	rows    int
	longest int
}{
	{"session", 1, 0},
	{"message", 5, 7242},
	{"part", 12, 7134},
	{"event", 40, 7379},
}

// TestSQLiteFixture reads opencode's database as opencode left it (pages
// in the file and newer ones in the WAL), and as a checkpoint would leave
// it (the file alone): the same rows as SQLite reads, their JSON whole,
// rows over a page (overflow pages) and tables over a page (interior
// pages) included.
func TestSQLiteFixture(t *testing.T) {
	db, wal := opencodeImage(t)
	for _, c := range []struct {
		name    string
		db, wal []byte
	}{
		{"with its WAL", db, wal},
		{"checkpointed", checkpoint(t, db, wal), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := open(t, c.db, c.wal)
			for _, tc := range fixtureTables {
				tb, err := d.table(tc.name)
				if err != nil {
					t.Fatalf("table %s: %v", tc.name, err)
				}
				rows, longest := 0, 0
				err = d.each(tb, func(row map[string]any, err error) error {
					if err != nil {
						t.Errorf("%s: row: %v", tc.name, err)
						return nil
					}
					rows++
					if data, ok := row["data"].(string); ok {
						longest = max(longest, len(data))
						if !json.Valid([]byte(data)) {
							t.Errorf("%s: data of %v is not JSON", tc.name, row["id"])
						}
					}
					return nil
				})
				if err != nil || rows != tc.rows || longest != tc.longest {
					t.Errorf("table %s: %d rows, longest data %d, %v; want %d, %d", tc.name, rows, longest, err, tc.rows, tc.longest)
				}
			}
			if _, err := d.table("nothing"); err == nil {
				t.Errorf("table nothing: no error")
			}
		})
	}
	t.Run("the file alone", func(t *testing.T) {
		// Without its WAL the file is an older state: it reads, or fails
		// with an error, never panics.
		d, err := openSQLite(bytes.NewReader(db), int64(len(db)), nil, 0)
		if err == nil {
			if tb, err := d.table("session"); err == nil {
				d.each(tb, func(map[string]any, error) error { return nil })
			}
		}
	})
}

// TestSQLiteWALDamage: a WAL cut or damaged in its last frames reads as
// of its last whole commit before the damage; one damaged in its header
// is ignored, the file read alone.
func TestSQLiteWALDamage(t *testing.T) {
	db, wal := opencodeImage(t)
	whole := open(t, db, wal)
	frame := 24 + whole.pageSize
	end := whole.walEnd
	if end < int64(32+2*frame) {
		t.Fatalf("the fixture's WAL ends its last commit at %d: too short to damage", end)
	}
	for _, c := range []struct {
		name  string
		wal   func() []byte
		whole bool // reads as the whole WAL
	}{
		{"cut mid-frame", func() []byte { return wal[:end-int64(frame/2)] }, false},
		{"cut after the last commit", func() []byte { return wal[:end] }, true},
		{"zeros after the last commit", func() []byte { return append(bytes.Clone(wal[:end]), make([]byte, 3*frame)...) }, true},
		{"the last commit's checksum", func() []byte {
			w := bytes.Clone(wal)
			w[end-1] ^= 0xff
			return w
		}, false},
		{"salts of another generation", func() []byte {
			w := bytes.Clone(wal)
			w[32+8] ^= 0xff // the first frame's salt
			return w
		}, false},
		{"the header's checksum", func() []byte {
			w := bytes.Clone(wal)
			w[24] ^= 0xff
			return w
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := openSQLite(bytes.NewReader(db), int64(len(db)), bytes.NewReader(c.wal()), int64(len(c.wal())))
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if got := reflect.DeepEqual(d.walPages, whole.walPages); got != c.whole {
				t.Errorf("the WAL read whole: %v, want %v (%d pages of %d)", got, c.whole, len(d.walPages), len(whole.walPages))
			}
		})
	}
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		v    uint64
		size int
	}{
		{[]byte{0}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x82, 0x80, 0x01}, 1<<15 | 1, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		if v, n := varint(c.in); v != c.v || n != c.size {
			t.Errorf("varint(%x) = %d, %d; want %d, %d", c.in, v, n, c.v, c.size)
		}
	}
}

func TestRecord(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want []any
		bad  bool
	}{
		{"empty", []byte{1}, nil, false},
		{"null, 0, 1", []byte{4, 0, 8, 9}, []any{nil, int64(0), int64(1)}, false},
		{"integers", []byte{5, 1, 2, 6, 5, 0xff, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0, 0, 1},
			[]any{int64(-1), int64(256), int64(42), int64(1)}, false},
		{"float", append([]byte{2, 7}, binary.BigEndian.AppendUint64(nil, math.Float64bits(0.25))...), []any{0.25}, false},
		{"text and blob", []byte{3, 19, 16, 'a', 'b', 'c', 1, 2}, []any{"abc", []byte{1, 2}}, false},
		{"a value cut", []byte{2, 19, 'a'}, nil, true},
		{"a header longer than the record", []byte{9, 0}, nil, true},
		{"a reserved type", []byte{2, 10}, nil, true},
		{"a huge text", []byte{10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, nil, true},
	} {
		got, err := record(c.in)
		if (err != nil) != c.bad || !c.bad && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: record(%x) = %#v, %v; want %#v, error %v", c.name, c.in, got, err, c.want, c.bad)
		}
		if err != nil && !errors.Is(err, errDamaged) {
			t.Errorf("%s: error %v is not errDamaged", c.name, err)
		}
	}
}

func TestColumns(t *testing.T) {
	for _, c := range []struct {
		sql   string
		want  []string
		alias int
	}{
		{"CREATE TABLE `message` (\n `id` text PRIMARY KEY,\n `session_id` text NOT NULL,\n `data` text NOT NULL,\n" +
			" CONSTRAINT `fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE\n)",
			[]string{"id", "session_id", "data"}, -1},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, \"b c\" TEXT DEFAULT 'x,y', [d] REAL DEFAULT (1,2), PRIMARY KEY(a), UNIQUE(b), CHECK(a>0))",
			[]string{"a", "b c", "d"}, 0},
		{"CREATE TABLE t (x integer primary key autoincrement, y)", []string{"x", "y"}, 0},
		{"CREATE TABLE t (x int primary key, y)", []string{"x", "y"}, -1},
		{"CREATE TABLE t", nil, -1},
		{"", nil, -1},
		{")(", nil, -1},
	} {
		got, alias := columns(c.sql)
		if !reflect.DeepEqual(got, c.want) || alias != c.alias {
			t.Errorf("columns(%q) = %q, %d; want %q, %d", c.sql, got, alias, c.want, c.alias)
		}
	}
}

// FuzzSQLite: any database file and WAL open, or fail, without panicking
// and in bounded time, and a table reads, or fails, the same way. Its
// seeds are pages of 4 KiB: fuzz it with -fuzzminimizetime 2s, or the
// fuzzer spends its time minimizing them.
func FuzzSQLite(f *testing.F) {
	db, wal := opencodeImage(f)
	d := open(f, db, wal)
	ps := d.pageSize
	// The file's first pages and the WAL's first frames: page 1 holds
	// the schema.
	f.Add(db[:4*ps], wal[:32+3*(24+ps)])
	f.Add(db[:ps], []byte(nil))
	f.Add(db[:100], wal[:32])
	f.Add([]byte(sqliteMagic), []byte(nil))
	f.Fuzz(func(t *testing.T, db, wal []byte) {
		var w *bytes.Reader
		if wal != nil {
			w = bytes.NewReader(wal)
		}
		var d *sqliteDB
		var err error
		if w != nil {
			d, err = openSQLite(bytes.NewReader(db), int64(len(db)), w, int64(len(wal)))
		} else {
			d, err = openSQLite(bytes.NewReader(db), int64(len(db)), nil, 0)
		}
		if err != nil {
			return
		}
		for _, name := range []string{"session", "message"} {
			tb, err := d.table(name)
			if err != nil {
				continue
			}
			d.each(tb, func(map[string]any, error) error { return nil })
		}
	})
}

// FuzzRecord: any record decodes, or fails, without panicking, into no
// more values than its header has bytes.
func FuzzRecord(f *testing.F) {
	f.Add([]byte{4, 0, 8, 9})
	f.Add([]byte{3, 19, 16, 'a', 'b', 'c', 1, 2})
	f.Add([]byte{2, 7, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := record(b)
		if err == nil && len(v) > len(b) {
			t.Errorf("record(%x) = %d values", b, len(v))
		}
	})
}
