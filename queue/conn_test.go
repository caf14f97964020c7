package queue

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"nats://host:4222", "nats://host:4222"},
		{"nats://user:pw@host:4222", "nats://user:xxxxx@host:4222"},
		{"nats://s3cr3t-token@host", "nats://xxxxx@host"},
		{"tls://a:b@h", "tls://a:xxxxx@h"},
		{"nats://a:1,nats://b:2", "nats://a:1,nats://b:2"},
		{"nats://u:p%zz@host", "xxxxx@host"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzRedact checks that no password (or nats token) of a URL that parses
// survives Redact.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"nats://user:pw@host:4222", "nats://tok@h", "https://me:secret@example.com/r", "tls://a:b@c@d", "nats://h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		u, err := url.Parse(s)
		if err != nil || u.User == nil {
			return
		}
		if pw, ok := u.User.Password(); ok && len(pw) > 5 && strings.Contains(out, pw) {
			t.Fatalf("Redact(%q) = %q shows the password %q", s, out, pw)
		}
		if _, ok := u.User.Password(); !ok && u.Scheme == "nats" && len(u.User.Username()) > 5 && strings.Contains(out, u.User.Username()+"@") {
			t.Fatalf("Redact(%q) = %q shows the token", s, out)
		}
	})
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"nats://h", "nats://h:4222", "tls://h:4222", "nats://a,nats://b:1", "wss://h/x"} {
		if err := CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "http://h", "h:4222", "nats://", "nats://h,", "nats://u:secret@h x"} {
		err := CheckURL(bad)
		if err == nil {
			t.Errorf("CheckURL(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("CheckURL(%q): %v shows the password", bad, err)
		}
	}
}

// TestOptionsFiles: the secret files of the options, absolute, for the
// tasks' read policy; the certificates are not secret.
func TestOptionsFiles(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		o    Options
		want []string
	}{
		{Options{}, nil},
		{Options{Creds: "/etc/w.creds", TLSCA: "/ca.pem", TLSCert: "/c.pem"}, []string{"/etc/w.creds"}},
		{Options{NKey: "seed.nk", TLSKey: "/k/../key.pem"}, []string{filepath.Join(wd, "seed.nk"), "/key.pem"}},
	} {
		if got := tt.o.Files(); !slices.Equal(got, tt.want) {
			t.Errorf("%+v.Files() = %q, want %q", tt.o, got, tt.want)
		}
	}
}
