package realcli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// httpsProxy stands in for the Internet for a program that names a real
// HTTPS host it cannot be told to leave (Symphony's WORKFLOW.md has no
// tracker.endpoint, so drover calls https://api.linear.app/graphql): the
// program runs with HTTPS_PROXY at the proxy and SSL_CERT_FILE at the
// proxy's CA, which is how a user points any Go program at another server,
// and the proxy's CONNECT tunnels end in a TLS server whose certificate
// names the host and which forwards to target.
type httpsProxy struct {
	URL    string // for HTTPS_PROXY
	CAFile string // for SSL_CERT_FILE

	mu    sync.Mutex
	hosts []string // the CONNECT targets asked for, in order
}

func newHTTPSProxy(t *testing.T, host, target string) *httpsProxy {
	t.Helper()
	tu, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "drover realcli test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p := &httpsProxy{CAFile: filepath.Join(t.TempDir(), "ca.pem")}
	if err := os.WriteFile(p.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	tlsSrv := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(tu))
	tlsSrv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hosts = append(p.hosts, r.Method+" "+r.Host)
		p.mu.Unlock()
		if r.Method != http.MethodConnect || r.Host != host+":443" {
			// Anything else (the agent's own calls home, say) finds no
			// Internet here, as in the namespace without the proxy.
			http.Error(w, "this test proxy tunnels to "+host+":443 only", http.StatusForbidden)
			return
		}
		up, err := net.Dial("tcp", tlsSrv.Listener.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			up.Close()
			return
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 200 Connection Established\r\n\r\n")
		go func() { _, _ = io.Copy(up, conn); up.Close() }()
		go func() { _, _ = io.Copy(conn, up); conn.Close() }()
	}))
	t.Cleanup(proxy.Close)
	p.URL = proxy.URL
	return p
}

// Hosts returns the requests the proxy got ("CONNECT host:port").
func (p *httpsProxy) Hosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.hosts)
}
