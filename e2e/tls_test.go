package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/auth"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files into a directory.
type testPKI struct {
	dir    string
	pool   *x509.CertPool
	client tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	issue := func(name string, usage x509.ExtKeyUsage, serial int64) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		kb, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	}
	write := func(name string, b []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	write("ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	sc, sk := issue("server", x509.ExtKeyUsageServerAuth, 2)
	write("server.pem", sc)
	write("server.key", sk)
	cc, ck := issue("client", x509.ExtKeyUsageClientAuth, 3)
	client, err := tls.X509KeyPair(cc, ck)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{dir: dir, pool: pool, client: client}
}

func (p *testPKI) security(mode int) func(*app.Config) {
	return func(c *app.Config) {
		c.Security.TLSMode = mode
		c.Security.ServerPemPath = filepath.Join(p.dir, "server.pem")
		c.Security.ServerKeyPath = filepath.Join(p.dir, "server.key")
		c.Security.CaPemPath = filepath.Join(p.dir, "ca.pem")
	}
}

// tlsGRPC calls GetVersion over TLS.
func tlsGRPC(t *testing.T, addr string, cfg *tls.Config) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	require.NoError(t, err)
	defer conn.Close()
	_, err = milvuspb.NewMilvusServiceClient(conn).GetVersion(ctxT(t), &milvuspb.GetVersionRequest{})
	return err
}

// tlsREST lists collections over HTTPS (HTTP/1.1).
func tlsREST(t *testing.T, addr string, cfg *tls.Config) (string, error) {
	tr := &http.Transport{TLSClientConfig: cfg}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Post("https://"+addr+"/v2/vectordb/collections/list",
		"application/json", strings.NewReader(`{}`))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestTLSOneWay(t *testing.T) {
	pki := newTestPKI(t)
	s := startServer(t, t.TempDir(), pki.security(auth.TLSOneWay))
	cfg := &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12}
	require.NoError(t, tlsGRPC(t, s.addr, cfg))
	body, err := tlsREST(t, s.addr, cfg)
	require.NoError(t, err)
	require.Contains(t, body, `"code":0`)
	// A cleartext client is not served.
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	_, err = milvuspb.NewMilvusServiceClient(conn).GetVersion(ctxT(t), &milvuspb.GetVersionRequest{})
	require.Error(t, err)
	// The client must trust the CA.
	require.Error(t, tlsGRPC(t, s.addr, &tls.Config{MinVersion: tls.VersionTLS12}))
}

func TestTLSMutual(t *testing.T) {
	pki := newTestPKI(t)
	s := startServer(t, t.TempDir(), pki.security(auth.TLSMutual))
	with := &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}, MinVersion: tls.VersionTLS12}
	require.NoError(t, tlsGRPC(t, s.addr, with))
	body, err := tlsREST(t, s.addr, with)
	require.NoError(t, err)
	require.Contains(t, body, `"code":0`)
	without := &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12}
	require.Error(t, tlsGRPC(t, s.addr, without))
	_, err = tlsREST(t, s.addr, without)
	require.Error(t, err)
}

func TestTLSBadFilesFailAtStart(t *testing.T) {
	pki := newTestPKI(t)
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name  string
		tweak func(*app.Config)
		want  string
	}{
		{"missing cert", func(c *app.Config) { c.Security.ServerPemPath = filepath.Join(pki.dir, "none.pem") }, "security.serverPemPath"},
		{"key is not a key", func(c *app.Config) { c.Security.ServerKeyPath = c.Security.CaPemPath }, "serverKeyPath"},
		{"missing CA", func(c *app.Config) { c.Security.CaPemPath = filepath.Join(pki.dir, "none.pem") }, "security.caPemPath"},
		{"CA not PEM", func(c *app.Config) { c.Security.CaPemPath = c.Security.ServerKeyPath }, "no PEM certificate"},
		{"no paths", func(c *app.Config) { c.Security.ServerPemPath, c.Security.ServerKeyPath = "", "" }, "needs serverPemPath and serverKeyPath"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := app.Defaults()
			cfg.DataDir = t.TempDir()
			cfg.Addr, cfg.MetricsAddr = "127.0.0.1:0", ""
			pki.security(auth.TLSMutual)(&cfg)
			tc.tweak(&cfg)
			_, err := app.Listen(cfg, logger)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
