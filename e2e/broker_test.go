//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// keyRecorder serves the scripted model over TLS, as a provider does, and
// keeps the credential headers of each request.
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
	next http.Handler
}

func (k *keyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.keys = append(k.keys, r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("X-Goog-Api-Key")+" "+r.URL.Query().Get("key"))
	k.mu.Unlock()
	k.next.ServeHTTP(w, r)
}

func (k *keyRecorder) seen() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return strings.Join(k.keys, "\n")
}

// tlsModel serves h over TLS at a certificate for model.test, and returns
// its port and the file of its CA's certificate.
func tlsModel(t *testing.T, h http.Handler) (string, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "model.test"}, DNSNames: []string{"model.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "https://"), ":")
	return port, caFile
}

// TestBrokerConfined runs each real harness confined against the scripted
// model served over TLS as model.test, authenticated with an API key the
// way each takes one (claude's and gemini's variable, codex's auth.json,
// opencode's OPENAI_API_KEY at its openai provider's baseURL): the turn
// completes through workforce's broker, the model gets the real key,
// and a shell command of the agent printing its environment (and codex's
// auth.json) shows the placeholder, never the key.
func TestBrokerConfined(t *testing.T) {
	if _, err := os.Stat("/usr/bin/curl"); err != nil {
		t.Skip("no curl on this system")
	}
	perms := shellPerms
	for _, h := range []string{"claude", "codex", "opencode", "gemini"} {
		t.Run(h, func(t *testing.T) {
			real := "sk-e2e-real-" + h + "-0123456789"
			show := shellStep(h, "env | grep -i -e key -e token; cat \"$CODEX_HOME/auth.json\" 2>/dev/null; true")
			var dir string
			var s *scripted
			var e *scriptedEnv
			if h == "gemini" {
				dir, s, e = geminiRunProject(t, perms[h], "", show, step{Text: "finished"})
			} else {
				dir, s, e = oneShotProject(t, h, "editor", perms[h], show, step{Text: "finished"})
			}
			rec := &keyRecorder{next: s}
			port, ca := tlsModel(t, rec)
			base := "https://model.test:" + port
			e.vars = setVar(e.vars, "WORKFORCE_TEST_HOSTS=model.test=127.0.0.1:"+port)
			e.vars = setVar(e.vars, "WORKFORCE_TEST_ROOT_CA="+ca)
			for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
				e.vars = setVar(e.vars, k+"=")
			}
			switch h {
			case "claude":
				e.vars = setVar(e.vars, "ANTHROPIC_BASE_URL="+base)
				e.vars = setVar(e.vars, "ANTHROPIC_API_KEY="+real)
			case "gemini":
				e.vars = setVar(e.vars, "GOOGLE_GEMINI_BASE_URL="+base)
				e.vars = setVar(e.vars, "GEMINI_API_KEY="+real)
			case "codex":
				codexHome := filepath.Join(e.home, ".codex")
				os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf("model = \"gpt-5.5\"\nopenai_base_url = %q\n", base+"/v1")), 0o644)
				os.WriteFile(filepath.Join(codexHome, "auth.json"), []byte(`{"auth_mode": "apikey", "OPENAI_API_KEY": "`+real+`"}`), 0o600)
			case "opencode":
				var oc string
				for _, kv := range e.vars {
					if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG="); ok {
						oc = v
					}
				}
				os.WriteFile(oc, []byte(fmt.Sprintf(`{"provider": {"openai": {"options": {"baseURL": %q}, "models": {"gpt-5-mini": {"name": "gpt-5-mini"}}}},
  "model": "openai/gpt-5-mini", "autoupdate": false, "share": "disabled", "permission": {"edit": "allow", "bash": "allow"}}`, base+"/v1")), 0o644)
				e.vars = setVar(e.vars, "OPENAI_API_KEY="+real)
				pdir := filepath.Join(e.home, ".agentworkforce", "workforce", "personas")
				os.WriteFile(filepath.Join(pdir, "editor.json"), []byte(`{"id": "editor", "intent": "test", "description": "e2e one-shot persona",
 "permissions": `+perms[h]+`, "tiers": {"best": {"harness": "opencode", "model": "openai/gpt-5-mini"}}}`), 0o644)
			}
			res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "show your environment")
			if res.Status != report.StatusSucceeded {
				t.Errorf("status %s (exit %d), want succeeded: the turn through the broker did not complete\nstderr:\n%s", res.Status, code, stderr)
			}
			if seen := rec.seen(); !strings.Contains(seen, real) || strings.Contains(seen, "workforce-placeholder-") {
				t.Errorf("the model got the keys\n%s\nwant the real key, never the placeholder", seen)
			}
			var sawPlaceholder bool
			for i, body := range s.requests() {
				if strings.Contains(string(body), real) {
					t.Errorf("request %d carries the real key: the agent's command saw it", i)
				}
				sawPlaceholder = sawPlaceholder || strings.Contains(string(body), "workforce-placeholder-")
			}
			if !sawPlaceholder {
				t.Errorf("no request carries the placeholder: the agent's command did not show its environment")
			}
			if n := res.Network; n == nil || len(n.Denied) != 0 {
				t.Errorf("network %+v, want nothing denied", n)
			}
		})
	}
}
