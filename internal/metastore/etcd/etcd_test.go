package etcd_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/enginetest"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/etcd"
	"github.com/strata-db/strata/internal/metastore/kvtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startEtcd runs a single-member etcd server in-process until the test ends.
func startEtcd(t *testing.T) string { return enginetest.Etcd(t) }

// TestClientOutlivesOpenContext: Open's context bounds the open only. A
// process that stops on that context still has its client: a session on
// it stays alive, and closing it revokes the lease at once (it used to end
// with the context, leaving the session to expire a TTL later while other
// nodes still saw the process).
func TestClientOutlivesOpenContext(t *testing.T) {
	endpoint := startEtcd(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := etcd.Open(ctx, etcd.Config{Endpoints: []string{endpoint}, Root: "outlive/"}, nil)
	require.NoError(t, err)
	sess, err := concurrency.NewSession(s.Client(), concurrency.WithTTL(30))
	require.NoError(t, err)
	cancel()
	require.NoError(t, s.Client().Ctx().Err(), "the client ended with Open's context")
	select {
	case <-sess.Done():
		t.Fatal("the session ended with Open's context")
	case <-time.After(300 * time.Millisecond):
	}
	_, err = s.Scan(context.Background(), "")
	require.NoError(t, err, "the store answers after Open's context ended")
	lease := sess.Lease()
	require.NoError(t, sess.Close())
	ttl, err := s.Client().TimeToLive(context.Background(), lease)
	require.NoError(t, err)
	require.EqualValues(t, -1, ttl.TTL, "the lease is revoked at once")
	require.NoError(t, s.Close())
	require.Error(t, s.Client().Ctx().Err())
}

func TestConformance(t *testing.T) {
	endpoint := startEtcd(t)
	n := 0
	openRoot := func(t *testing.T, root string) metastore.KV {
		s, err := etcd.Open(context.Background(), etcd.Config{Endpoints: []string{endpoint}, Root: root}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	}
	kvtest.RunConformance(t,
		func(t *testing.T) metastore.KV {
			n++ // each test gets its own, empty namespace
			return openRoot(t, fmt.Sprintf("test/%d/", n))
		},
		func(t *testing.T, kv metastore.KV) metastore.KV {
			return openRoot(t, kv.(*etcd.Store).Root())
		},
	)
}

func TestRootIsolation(t *testing.T) {
	ctx := context.Background()
	endpoint := startEtcd(t)
	open := func(root string) *etcd.Store {
		s, err := etcd.Open(ctx, etcd.Config{Endpoints: []string{endpoint}, Root: root}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) })
		return s
	}
	a, ab := open("a/"), open("a/b/")
	require.NoError(t, ab.Txn(ctx, metastore.Put("k", []byte("inner"))))
	require.NoError(t, a.Txn(ctx, metastore.Put("k", []byte("outer"))))

	kvs, err := ab.Scan(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []metastore.KeyValue{{Key: "k", Value: []byte("inner")}}, kvs)

	kvs, err = a.Scan(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []metastore.KeyValue{{Key: "b/k", Value: []byte("inner")}, {Key: "k", Value: []byte("outer")}}, kvs)
}

func TestEmptyRoot(t *testing.T) {
	ctx := context.Background()
	endpoint := startEtcd(t)
	s, err := etcd.Open(ctx, etcd.Config{Endpoints: []string{endpoint}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	require.NoError(t, s.Txn(ctx, metastore.Put("b", []byte("2")), metastore.Put("a", []byte("1"))))
	kvs, err := s.Scan(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []metastore.KeyValue{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}}, kvs)
}

func TestScanPaging(t *testing.T) {
	ctx := context.Background()
	endpoint := startEtcd(t)
	s, err := etcd.Open(ctx, etcd.Config{Endpoints: []string{endpoint}, Root: "page/"}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	const total = 2500 // more than two pages
	for i := 0; i < total; i += 100 {
		ops := make([]metastore.Op, 0, 100)
		for j := i; j < i+100; j++ {
			ops = append(ops, metastore.Put(fmt.Sprintf("k/%05d", j), []byte{byte(j)}))
		}
		require.NoError(t, s.Txn(ctx, ops...))
	}
	kvs, err := s.Scan(ctx, "k/")
	require.NoError(t, err)
	require.Len(t, kvs, total)
	for i, kv := range kvs {
		require.Equal(t, fmt.Sprintf("k/%05d", i), kv.Key)
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  etcd.Config
		ok   bool
	}{
		{name: "ok", cfg: etcd.Config{Endpoints: []string{"http://127.0.0.1:2379"}, DialTimeout: etcd.DefaultDialTimeout}, ok: true},
		{name: "zero timeout is the default", cfg: etcd.Config{Endpoints: []string{"x"}}, ok: true},
		{name: "no endpoints", cfg: etcd.Defaults()},
		{name: "negative timeout", cfg: etcd.Config{Endpoints: []string{"x"}, DialTimeout: -1}},
	}
	require.Equal(t, etcd.DefaultDialTimeout, etcd.Defaults().DialTimeout)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if tc.ok {
				require.NoError(t, cfg.Validate())
			} else {
				require.Error(t, cfg.Validate())
			}
		})
	}
}

// TestOpenUnreachable: Open on an etcd that does not answer probes it,
// logs every failed probe, and fails after StartTimeout with an error that
// names the endpoints and the setting — instead of waiting in its first
// request, silently and without end.
func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs}, nil))
	done := make(chan error, 1)
	go func() {
		_, err := etcd.Open(context.Background(), etcd.Config{
			Endpoints: []string{"http://" + addr}, DialTimeout: 100 * time.Millisecond, StartTimeout: 1500 * time.Millisecond,
		}, logger)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorContains(t, err, addr)
		require.ErrorContains(t, err, "not reachable after 1.5s")
		require.ErrorContains(t, err, "engines.meta.etcd.startTimeout")
	case <-time.After(time.Minute):
		t.Fatal("Open did not return for an unreachable etcd")
	}
	require.Contains(t, logs.String(), "etcd not reachable; retrying")
}

// TestRequestsBounded: once etcd is gone, a request fails after
// RequestTimeout (its context has no deadline of its own) instead of
// waiting forever, and Ping reports it.
func TestRequestsBounded(t *testing.T) {
	endpoint, stop := enginetest.EtcdStoppable(t)
	s, err := etcd.Open(context.Background(), etcd.Config{Endpoints: []string{endpoint}, Root: "b/", RequestTimeout: 300 * time.Millisecond}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	require.NoError(t, s.Ping(context.Background()))
	stop()
	done := make(chan error, 2)
	go func() {
		_, err := s.Get(context.Background(), "k")
		done <- err
		done <- s.Ping(context.Background())
	}()
	for range 2 {
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.DeadlineExceeded)
		case <-time.After(time.Minute):
			t.Fatal("a request to a stopped etcd did not return")
		}
	}
}

// lockedWriter serializes writes of concurrent loggers to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
