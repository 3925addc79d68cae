package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/strata-db/strata/internal/metastore"
)

// scanPageSize is how many keys one range request of Scan returns.
const scanPageSize = 1000

// Config configures a Store.
type Config struct {
	// Endpoints are the etcd client URLs (required).
	Endpoints []string `json:"endpoints"`
	// Root prefixes every key; conventionally ends with "/".
	Root string `json:"root"`
	// DialTimeout bounds establishing the first connection and each probe
	// of it at start. Default 5s.
	DialTimeout time.Duration `json:"dialTimeout"`
	// StartTimeout is how long Open keeps probing an etcd that does not
	// answer (logging each failed probe) before it fails. Default 30s.
	StartTimeout time.Duration `json:"startTimeout"`
	// RequestTimeout bounds each request (a caller's sooner deadline still
	// applies), so a call fails rather than waits for an unreachable etcd.
	// Default 10s.
	RequestTimeout time.Duration `json:"requestTimeout"`
	// Username and Password enable etcd authentication when Username is set.
	Username string `json:"username"`
	// Password is Username's password.
	Password string `json:"password"`
}

// Defaults of Config's timeouts.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultStartTimeout   = 30 * time.Second
	DefaultRequestTimeout = 10 * time.Second
)

// Defaults returns the default configuration (without Endpoints).
func Defaults() Config { return Config{}.withDefaults() }

// withDefaults returns c with unset fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	return c
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	if len(c.Endpoints) == 0 {
		return errors.New("metastore/etcd: config: no endpoints")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dialTimeout", c.DialTimeout}, {"startTimeout", c.StartTimeout}, {"requestTimeout", c.RequestTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("metastore/etcd: config: negative %s %v", d.name, d.v)
		}
	}
	return nil
}

// Store is a metastore.KV on etcd. It is safe for concurrent use.
type Store struct {
	client    *clientv3.Client
	ownClient bool
	root      string
	logger    *slog.Logger
	// timeout bounds a request whose context has no deadline (0: none).
	timeout time.Duration

	mu     sync.RWMutex
	closed bool
}

var _ metastore.KV = (*Store)(nil)

// Open connects to etcd and returns a Store that owns the connection. ctx
// bounds the open only: the client (and the sessions, leases and watches
// on it) lives until Close, so an owner that stops on ctx can still write
// its last state and revoke its session.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		Username:    cfg.Username,
		Password:    cfg.Password,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("metastore/etcd: connect %v: %w", cfg.Endpoints, err)
	}
	s := New(client, cfg.Root, logger)
	s.ownClient = true
	s.timeout = cfg.RequestTimeout
	if err := s.awaitReachable(ctx, cfg); err != nil {
		_ = client.Close()
		return nil, err
	}
	return s, nil
}

// awaitReachable probes etcd until it answers, logging every failed probe,
// and fails once cfg.StartTimeout has passed: the client connects lazily,
// so without it a start on an unreachable etcd would wait in its first
// request, silently and without end.
func (s *Store) awaitReachable(ctx context.Context, cfg Config) error {
	deadline := time.Now().Add(cfg.StartTimeout)
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
		err := s.Ping(pctx)
		cancel()
		if err == nil {
			if attempt > 1 {
				s.logger.Info("etcd reachable", "endpoints", cfg.Endpoints, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("metastore/etcd: connect %v: %w", cfg.Endpoints, ctx.Err())
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("metastore/etcd: %v not reachable after %v (%d attempts; engines.meta.etcd.startTimeout): %w",
				cfg.Endpoints, cfg.StartTimeout, attempt, err)
		}
		s.logger.Warn("etcd not reachable; retrying", "endpoints", cfg.Endpoints, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Second, time.Until(deadline))):
		}
	}
}

// Ping asks etcd for the count of the store's keys: nil when it answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	key := s.root
	if key == "" {
		key = "\x00"
	}
	if _, err := s.client.Get(ctx, key, clientv3.WithCountOnly()); err != nil {
		return wrapErr(ctx, "ping", err)
	}
	return nil
}

// bound limits a request to the store's request timeout (or ctx's
// deadline, if sooner): the etcd client waits for a connection to become
// ready, so without a bound a request to an unreachable etcd would wait as
// long as the caller's deadline, or forever.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// New returns a Store over an existing client, which the caller keeps
// owning: Close does not close it.
func New(client *clientv3.Client, root string, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{client: client, root: root, logger: logger}
}

// Root returns the prefix under which the store keeps its keys.
func (s *Store) Root() string { return s.root }

// begin checks ctx and the closed flag; on success the caller must call
// s.mu.RUnlock.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return metastore.ErrClosed
	}
	return nil
}

// Get returns the value at key, or metastore.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	ctx, cancel := s.bound(ctx)
	defer cancel()
	resp, err := s.client.Get(ctx, s.root+key)
	if err != nil {
		return nil, wrapErr(ctx, "get", err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("%w: %q", metastore.ErrNotFound, key)
	}
	return nonNil(resp.Kvs[0].Value), nil
}

// Scan returns every entry whose key starts with prefix, sorted by key, as
// one consistent snapshot.
func (s *Store) Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	start := s.root + prefix
	end := "\x00" // with an empty prefix: every key from start on
	if start == "" {
		start = "\x00" // etcd rejects an empty key; "\x00" is the smallest valid one
	} else {
		end = clientv3.GetPrefixRangeEnd(start)
	}
	var (
		out []metastore.KeyValue
		rev int64
	)
	for {
		opts := []clientv3.OpOption{
			clientv3.WithRange(end),
			clientv3.WithLimit(scanPageSize),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend),
		}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		pctx, cancel := s.bound(ctx) // per page: a long scan is many short requests
		resp, err := s.client.Get(pctx, start, opts...)
		cancel()
		if err != nil {
			return nil, wrapErr(pctx, "scan", err)
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			out = append(out, metastore.KeyValue{Key: string(kv.Key[len(s.root):]), Value: nonNil(kv.Value)})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Txn applies ops as one etcd transaction.
func (s *Store) Txn(ctx context.Context, ops ...metastore.Op) error {
	if err := metastore.ValidateOps(ops); err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if len(ops) == 0 {
		return nil
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	cmps, then := s.txnOps(ops)
	resp, err := s.client.Txn(ctx).If(cmps...).Then(then...).Commit()
	if err != nil {
		return wrapErr(ctx, "txn", err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: a guard of %v is false", metastore.ErrConflict, ops)
	}
	return nil
}

// txnOps maps ops onto etcd compares (the guards) and operations (the
// mutations).
func (s *Store) txnOps(ops []metastore.Op) (cmps []clientv3.Cmp, then []clientv3.Op) {
	for _, op := range ops {
		key := s.root + op.Key()
		switch op.Kind() {
		case metastore.OpIfAbsent:
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(key), "=", 0))
		case metastore.OpIfEquals:
			cmps = append(cmps, clientv3.Compare(clientv3.Value(key), "=", string(op.Value())))
		case metastore.OpPut:
			then = append(then, clientv3.OpPut(key, string(op.Value())))
		case metastore.OpDelete:
			then = append(then, clientv3.OpDelete(key))
		case metastore.OpDeletePrefix:
			then = append(then, clientv3.OpDelete(key, clientv3.WithPrefix()))
		}
	}
	return cmps, then
}

// Client returns the store's etcd client, for other users of the same
// etcd (cluster membership), so that a process holds one connection. The
// store keeps owning it.
func (s *Store) Client() *clientv3.Client { return s.client }

// Close closes the client if the store owns it. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.ownClient {
		return nil
	}
	if err := s.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("metastore/etcd: close: %w", err)
	}
	return nil
}

// wrapErr returns ctx's error when ctx ended (so callers can match
// context.Canceled), else err with the operation named.
func wrapErr(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("metastore/etcd: %s: %w", op, ctxErr)
	}
	return fmt.Errorf("metastore/etcd: %s: %w", op, err)
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
