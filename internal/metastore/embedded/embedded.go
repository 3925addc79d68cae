package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/strata-db/strata/internal/health"
	"github.com/strata-db/strata/internal/metastore"
)

// bucketName is the bucket that holds every metastore key.
var bucketName = []byte("kv")

// lockTimeout bounds how long Open and Verify wait for another process's
// file lock.
const lockTimeout = 2 * time.Second

// Store is a metastore.KV backed by one bbolt file. It is safe for
// concurrent use.
type Store struct {
	path   string
	logger *slog.Logger

	mu     sync.RWMutex // guards db against Close; held shared by operations
	db     *bolt.DB     // nil once closed
	closed bool

	broken   atomic.Pointer[CorruptError] // set once bbolt panicked: every later operation fails with it
	problems health.Set                   // damage found while open
}

var _ metastore.KV = (*Store)(nil)

// Open opens (creating if needed) the bbolt file at path. An existing file
// is verified first (see Verify); damage fails Open with a *CorruptError
// (wrapping metastore.ErrCorrupt) that names the file and what is damaged,
// and the file is left as it was. A legacy file is upgraded to the
// checksummed format in one transaction (see doc.go).
func Open(path string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rep := report{fresh: true, legacy: true}
	switch info, err := os.Stat(path); {
	case errors.Is(err, fs.ErrNotExist):
		// A new file: bbolt creates it.
	case err != nil:
		return nil, fmt.Errorf("metastore/embedded: open %s: %w", path, err)
	case info.IsDir():
		return nil, fmt.Errorf("metastore/embedded: open %s: is a directory", path)
	default:
		start := time.Now()
		var size int
		rep, size, err = inspectFile(path, true)
		if err != nil {
			return nil, err
		}
		if len(rep.damage) > 0 {
			return nil, &CorruptError{Path: path, Damage: rep.damage, atOpen: true}
		}
		logger.Debug("meta store verified", slog.String("path", path), slog.Int("bytes", size), slog.Duration("took", time.Since(start)))
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, logger: logger, db: db}
	if rep.legacy {
		if err := s.upgrade(rep.fresh); err != nil {
			return nil, errors.Join(err, db.Close())
		}
	}
	logger.Debug("meta store opened", slog.String("path", path))
	return s, nil
}

// openBolt opens the bbolt file; a panic inside bbolt becomes an error.
func openBolt(path string) (*bolt.DB, error) {
	var db *bolt.DB
	err := recoverBolt(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
		return err
	})
	if err != nil {
		if errors.Is(err, metastore.ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("metastore/embedded: open %s: %w", path, err)
	}
	return db, nil
}

// upgrade writes the format record, wrapping every legacy value in the
// checksum envelope first, in one transaction.
func (s *Store) upgrade(fresh bool) error {
	n := 0
	err := s.guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketName)
			if err != nil {
				return err
			}
			var kvs []metastore.KeyValue
			if err := b.ForEach(func(k, v []byte) error {
				kvs = append(kvs, metastore.KeyValue{Key: string(k), Value: bytes.Clone(v)})
				return nil
			}); err != nil {
				return err
			}
			for _, kv := range kvs {
				if err := b.Put([]byte(kv.Key), seal([]byte(kv.Key), kv.Value)); err != nil {
					return err
				}
			}
			n = len(kvs)
			f, err := tx.CreateBucket(formatBucket)
			if err != nil {
				return err
			}
			return f.Put(formatKey, seal(formatKey, formatValue()))
		})
	})
	if err != nil {
		return fmt.Errorf("metastore/embedded: upgrade %s to checksummed values: %w", s.path, err)
	}
	if !fresh {
		s.logger.Info("meta store upgraded: every value now carries a checksum",
			slog.String("path", s.path), slog.Int("values", n), slog.Int("format", formatVersion))
	}
	return nil
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Get returns the value at key, or metastore.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(b *bolt.Bucket) error {
		k := []byte(key)
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("%w: %q", metastore.ErrNotFound, key)
		}
		payload, err := s.unseal(k, v)
		if err != nil {
			return err
		}
		out = bytes.Clone(payload)
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
			payload, err := s.unseal(k, v)
			if err != nil {
				return err
			}
			val := bytes.Clone(payload)
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
	err := s.guard(func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketName)
			for _, op := range ops {
				if err := s.checkGuard(b, op); err != nil {
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
	})
	if err != nil && !errors.Is(err, metastore.ErrConflict) && !errors.Is(err, metastore.ErrCorrupt) {
		return fmt.Errorf("metastore/embedded: txn: %w", err)
	}
	return err
}

// checkGuard returns ErrConflict when op is a guard that does not hold.
func (s *Store) checkGuard(b *bolt.Bucket, op metastore.Op) error {
	switch op.Kind() {
	case metastore.OpIfAbsent:
		if b.Get([]byte(op.Key())) != nil {
			return fmt.Errorf("%w: %s", metastore.ErrConflict, op)
		}
	case metastore.OpIfEquals:
		k := []byte(op.Key())
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("%w: %s", metastore.ErrConflict, op)
		}
		payload, err := s.unseal(k, v)
		if err != nil {
			return err
		}
		if !bytes.Equal(payload, op.Value()) {
			return fmt.Errorf("%w: %s", metastore.ErrConflict, op)
		}
	}
	return nil
}

// apply performs one mutation; guards are no-ops here.
func apply(b *bolt.Bucket, op metastore.Op) error {
	switch op.Kind() {
	case metastore.OpPut:
		k := []byte(op.Key())
		return b.Put(k, seal(k, op.Value()))
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

// unseal checks the envelope of the value read at key.
func (s *Store) unseal(key, stored []byte) ([]byte, error) {
	payload, problem := unseal(key, stored)
	if problem != "" {
		err := &CorruptError{Path: s.path, Damage: []Damage{{Page: -1, Bucket: string(bucketName), Key: string(key), Problem: problem}}}
		s.problems.Report(health.Problem{Component: "metastore", Subject: fmt.Sprintf("%s key %q", s.path, key), Reason: err.Error()})
		s.logger.Error("meta store value damaged", slog.String("path", s.path), slog.String("key", string(key)), slog.String("problem", problem))
		return nil, err
	}
	return payload, nil
}

// Problems reports damage found while the store is open: a value whose
// checksum failed when read (that key cannot be read), and a bbolt failure
// on a damaged page (then nothing can be read or written). Open refuses a
// file that is already damaged, so a healthy start reports none.
func (s *Store) Problems() []health.Problem { return s.problems.Problems() }

// Close closes the bbolt file. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := recoverBolt(s.path, s.db.Close)
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
	return s.guard(func() error {
		return s.db.View(func(tx *bolt.Tx) error { return fn(tx.Bucket(bucketName)) })
	})
}

// guard runs fn, a call into bbolt, turning a panic (bbolt panics on pages
// it cannot make sense of, which Open's verification rules out unless the
// file is damaged while open) into a *CorruptError. After one, the store is
// broken: every later call fails with the same error rather than risk
// writing over a damaged file.
func (s *Store) guard(fn func() error) error {
	if broken := s.broken.Load(); broken != nil {
		return broken
	}
	err := recoverBolt(s.path, fn)
	var corrupt *CorruptError
	if errors.As(err, &corrupt) && corrupt.fromPanic {
		s.broken.CompareAndSwap(nil, corrupt)
		s.problems.Report(health.Problem{Component: "metastore", Subject: s.path, Reason: err.Error(), WritesUnavailable: true})
		s.logger.Error("meta store damaged while open; refusing every further operation", slog.String("path", s.path), slog.Any("err", err))
	}
	return err
}

// recoverBolt runs fn, a call into bbolt, and returns a panic inside it as a
// *CorruptError for path.
func recoverBolt(path string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &CorruptError{Path: path, Damage: []Damage{{Page: -1, Problem: fmt.Sprintf("bbolt failed on a damaged page: %v", r)}}, fromPanic: true}
		}
	}()
	// A page reference that bbolt follows out of its mapping faults; turn the
	// fault into a panic that the deferred recover above catches.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return fn()
}
