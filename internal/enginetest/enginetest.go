// Package enginetest starts the real cluster engines in-process for tests:
// an embedded single-member etcd server, an in-memory S3 server (gofakes3)
// and a Kafka cluster (franz-go's kfake). Each runs until the test ends.
// Only tests import it.
package enginetest

import (
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.etcd.io/etcd/server/v3/embed"
)

// freeURL returns an http URL on a currently free loopback port.
func freeURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return url.URL{}, err
	}
	return url.URL{Scheme: "http", Host: addr}, nil
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
	s, err := newEtcd(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.t = t
	t.Cleanup(s.Stop)
	return s
}

// LaunchEtcd starts an EtcdServer with its data under dir for a whole test
// binary (a TestMain, which has no test to tie it to): the caller stops it.
// Start (a restart after Stop) is for NewEtcd's servers only.
func LaunchEtcd(dir string) (*EtcdServer, error) { return newEtcd(dir) }

// newEtcd configures a single-member server on free loopback ports with
// its data under dir and starts it. A port found free can be taken by
// another process (tests of other packages run alongside) before etcd
// binds it: then it tries again on new ports, a few times.
func newEtcd(dir string) (*EtcdServer, error) {
	for attempt := 1; ; attempt++ {
		s, err := tryEtcd(dir)
		if err == nil || attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
	}
}

// tryEtcd is one attempt of newEtcd.
func tryEtcd(dir string) (*EtcdServer, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	client, err := freeURL()
	if err != nil {
		return nil, err
	}
	peer, err := freeURL()
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	s := &EtcdServer{URL: client.String(), cfg: cfg}
	return s, s.start()
}

// Start starts the server (again, after Stop) and waits until it is ready.
func (s *EtcdServer) Start() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *EtcdServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.e != nil {
		return nil
	}
	e, err := embed.StartEtcd(s.cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		return errors.New("enginetest: etcd did not become ready")
	}
	s.e = e
	return nil
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
