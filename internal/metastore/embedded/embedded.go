package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/strata-db/strata/internal/metastore"
)

// bucketName is the single bucket that holds every key.
var bucketName = []byte("kv")

// lockTimeout bounds how long Open waits for another process's file lock.
const lockTimeout = 2 * time.Second

// Store is a metastore.KV backed by one bbolt file. It is safe for
// concurrent use.
type Store struct {
	path   string
	logger *slog.Logger

	mu     sync.RWMutex // guards db against Close; held shared by operations
	db     *bolt.DB     // nil once closed
	closed bool
}

var _ metastore.KV = (*Store)(nil)

// Open opens (creating if needed) the bbolt file at path.
func Open(path string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, fmt.Errorf("metastore/embedded: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("metastore/embedded: create bucket: %w", err), db.Close())
	}
	logger.Debug("meta store opened", slog.String("path", path))
	return &Store{path: path, logger: logger, db: db}, nil
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Get returns the value at key, or metastore.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(b *bolt.Bucket) error {
		v := b.Get([]byte(key))
		if v == nil {
			return fmt.Errorf("%w: %q", metastore.ErrNotFound, key)
		}
		out = bytes.Clone(v)
		if out == nil {
			out = []byte{}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Scan returns every entry whose key starts with prefix, sorted by key.
func (s *Store) Scan(ctx context.Context, prefix string) ([]metastore.KeyValue, error) {
	var out []metastore.KeyValue
	p := []byte(prefix)
	err := s.view(ctx, func(b *bolt.Bucket) error {
		c := b.Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			val := bytes.Clone(v)
			if val == nil {
				val = []byte{}
			}
			out = append(out, metastore.KeyValue{Key: string(k), Value: val})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Txn applies ops in one fsynced bbolt transaction.
func (s *Store) Txn(ctx context.Context, ops ...metastore.Op) error {
	if err := metastore.ValidateOps(ops); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return metastore.ErrClosed
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketName)
		for _, op := range ops {
			if err := checkGuard(b, op); err != nil {
				return err
			}
		}
		for _, op := range ops {
			if err := apply(b, op); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, metastore.ErrConflict) {
		return fmt.Errorf("metastore/embedded: txn: %w", err)
	}
	return err
}

// checkGuard returns ErrConflict when op is a guard that does not hold.
func checkGuard(b *bolt.Bucket, op metastore.Op) error {
	switch op.Kind() {
	case metastore.OpIfAbsent:
		if b.Get([]byte(op.Key())) != nil {
			return fmt.Errorf("%w: %s", metastore.ErrConflict, op)
		}
	case metastore.OpIfEquals:
		v := b.Get([]byte(op.Key()))
		if v == nil || !bytes.Equal(v, op.Value()) {
			return fmt.Errorf("%w: %s", metastore.ErrConflict, op)
		}
	}
	return nil
}

// apply performs one mutation; guards are no-ops here.
func apply(b *bolt.Bucket, op metastore.Op) error {
	switch op.Kind() {
	case metastore.OpPut:
		v := op.Value()
		if v == nil {
			v = []byte{}
		}
		return b.Put([]byte(op.Key()), v)
	case metastore.OpDelete:
		return b.Delete([]byte(op.Key()))
	case metastore.OpDeletePrefix:
		// Collect first: deleting under a moving cursor can skip entries.
		p := []byte(op.Key())
		var keys [][]byte
		c := b.Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			keys = append(keys, bytes.Clone(k))
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the bbolt file. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.db.Close()
	s.db = nil
	s.logger.Debug("meta store closed", slog.String("path", s.path))
	if err != nil {
		return fmt.Errorf("metastore/embedded: close: %w", err)
	}
	return nil
}

// view runs fn in a read-only transaction on the bucket.
func (s *Store) view(ctx context.Context, fn func(b *bolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return metastore.ErrClosed
	}
	return s.db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketName)) })
}
