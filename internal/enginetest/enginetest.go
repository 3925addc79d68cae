// Package enginetest starts the real cluster engines in-process for tests:
// an embedded single-member etcd server, an in-memory S3 server (gofakes3)
// and a Kafka cluster (franz-go's kfake). Each runs until the test ends.
// Only tests import it.
package enginetest

import (
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.etcd.io/etcd/server/v3/embed"
)

// freeURL returns an http URL on a currently free loopback port.
func freeURL(t testing.TB) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return url.URL{Scheme: "http", Host: addr}
}

// Etcd runs a single-member etcd server in-process until the test ends and
// returns its client URL.
func Etcd(t testing.TB) string {
	t.Helper()
	return NewEtcd(t).URL
}

// EtcdStoppable is Etcd with a function that stops the server early (an
// outage the test causes); stop is idempotent.
func EtcdStoppable(t testing.TB) (url string, stop func()) {
	t.Helper()
	e := NewEtcd(t)
	return e.URL, e.Stop
}

// EtcdServer is an in-process etcd server that a test can stop and start
// again on the same data and URLs.
type EtcdServer struct {
	// URL is the client URL.
	URL string
	t   testing.TB
	cfg *embed.Config
	mu  sync.Mutex
	e   *embed.Etcd
}

// NewEtcd starts an EtcdServer that runs until the test ends.
func NewEtcd(t testing.TB) *EtcdServer {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	client, peer := freeURL(t), freeURL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	s := &EtcdServer{URL: client.String(), t: t, cfg: cfg}
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// Start starts the server (again, after Stop) and waits until it is ready.
func (s *EtcdServer) Start() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.e != nil {
		return
	}
	e, err := embed.StartEtcd(s.cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		s.t.Fatal("etcd did not become ready")
	}
	s.e = e
}

// Stop stops the server; it is idempotent.
func (s *EtcdServer) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.e != nil {
		s.e.Close()
		s.e = nil
	}
}

// S3 serves an in-memory S3 until the test ends and returns its host:port.
func S3(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// Kafka starts an in-process, in-memory Kafka cluster of one broker until
// the test ends and returns its broker addresses.
func Kafka(t testing.TB) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}
