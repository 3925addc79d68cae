package embedded

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	bolt "go.etcd.io/bbolt"
)

// ErrLocked is returned by OpenReadOnly (and wrapped by Open's error) when
// another process holds the file: a running server keeps its meta store
// locked exclusively.
var ErrLocked = errors.New("metastore/embedded: meta store is locked by another process (is the server running?)")

// OpenReadOnly opens an existing bbolt file at path for reading only, for
// offline tools such as `strata check`. It never creates or modifies the
// file. It takes a shared lock, so it fails with ErrLocked (after the usual
// short timeout) while a server holds the file, and it fails when the file
// does not exist. Txn on the returned store fails.
func OpenReadOnly(path string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("metastore/embedded: open %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, ReadOnly: true})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("metastore/embedded: open %s read-only: %w", path, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketName) == nil {
			return fmt.Errorf("metastore/embedded: %s has no %q bucket", path, bucketName)
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &Store{path: path, logger: logger, db: db}, nil
}
