package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Sentinel errors shared by every Store implementation.
var (
	// ErrNotFound is returned by Get, Open and Stat when the key is absent.
	ErrNotFound = errors.New("objstore: not found")
	// ErrInvalidKey is returned for a key or prefix that breaks the key rules.
	ErrInvalidKey = errors.New("objstore: invalid key")
)

// Store is the object-storage port. See the package documentation for the
// key rules and the full contract.
type Store interface {
	// Put stores data at key atomically and durably, replacing any previous object.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the object at key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Open returns a reader of the object at key and its size, or
	// ErrNotFound, for objects too large to hold twice while they are
	// decoded. The caller closes the reader; it reads the object as it was
	// when opened, or fails.
	Open(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Stat returns the object's metadata, or ErrNotFound.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List returns every object whose key starts with prefix, sorted by key.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Delete removes the object at key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	// Key is the object's key.
	Key string
	// Size is the object's length in bytes.
	Size int64
	// ModTime is when the object was last written.
	ModTime time.Time
}

// ValidateKey reports whether key follows the key rules; failures wrap
// ErrInvalidKey.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("%w: %q contains NUL", ErrInvalidKey, key)
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: %q has an empty segment", ErrInvalidKey, key)
		case ".", "..":
			return fmt.Errorf("%w: %q has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// ValidatePrefix reports whether prefix is usable with List: "" or a string
// whose complete segments (before its last "/") form a valid key and whose
// final partial segment has no NUL. Failures wrap ErrInvalidKey.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.IndexByte(prefix, 0) >= 0 {
		return fmt.Errorf("%w: prefix %q contains NUL", ErrInvalidKey, prefix)
	}
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return nil
	}
	if err := ValidateKey(prefix[:i]); err != nil {
		return fmt.Errorf("prefix %q: %w", prefix, err)
	}
	return nil
}
