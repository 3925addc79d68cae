package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/strata-db/strata/internal/auth"
)

// apiTLS builds the API port's TLS configuration from the security section:
// nil for tlsMode 0; the server certificate for 1; and for 2 also the CA
// that client certificates must chain to. Bad or missing files are errors
// that name the file and the setting.
func apiTLS(c auth.Config) (*tls.Config, error) {
	if c.TLSMode == auth.TLSOff {
		return nil, nil
	}
	for _, f := range []struct{ key, path string }{{"serverPemPath", c.ServerPemPath}, {"serverKeyPath", c.ServerKeyPath}} {
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("app: tls: security.%s: %w", f.key, err)
		}
	}
	cert, err := tls.LoadX509KeyPair(c.ServerPemPath, c.ServerKeyPath)
	if err != nil {
		return nil, fmt.Errorf("app: tls: security.serverPemPath %s / serverKeyPath %s: %w", c.ServerPemPath, c.ServerKeyPath, err)
	}
	// h2 for gRPC (grpc-go clients require it), http/1.1 for REST.
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if c.TLSMode == auth.TLSMutual {
		pem, err := os.ReadFile(c.CaPemPath)
		if err != nil {
			return nil, fmt.Errorf("app: tls: security.caPemPath: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("app: tls: security.caPemPath %s: no PEM certificate in it", c.CaPemPath)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
