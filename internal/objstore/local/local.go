package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/strata-db/strata/internal/objstore"
)

// tmpPrefix starts the name of every temporary file written by Put.
const tmpPrefix = ".tmp-"

// mkdirRetries bounds how often Put recreates a directory that a concurrent
// Delete pruned between creating it and writing into it.
const mkdirRetries = 16

// Store is an objstore.Store over a local directory. It is safe for
// concurrent use and holds no open resources.
type Store struct {
	root string
}

var _ objstore.Store = (*Store)(nil)

// Open returns a Store rooted at dir, creating dir if needed.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("objstore/local: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("objstore/local: create root: %w", err)
	}
	return &Store{root: abs}, nil
}

// Root returns the directory the store keeps its objects in.
func (s *Store) Root() string { return s.root }

// checkKey validates key and maps it to its file path.
func (s *Store) checkKey(key string) (string, error) {
	if err := objstore.ValidateKey(key); err != nil {
		return "", err
	}
	for seg := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(seg, tmpPrefix) {
			return "", fmt.Errorf("%w: %q uses the reserved segment prefix %q", objstore.ErrInvalidKey, key, tmpPrefix)
		}
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// Put writes data to a temporary file, fsyncs it and renames it into place.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	path, err := s.checkKey(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	for attempt := 0; ; attempt++ {
		err = s.writeAtomic(dir, path, data)
		// ENOENT: a concurrent Delete pruned the directory; make it again.
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt >= mkdirRetries {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("objstore/local: put %q: %w", key, err)
	}
	return nil
}

func (s *Store) writeAtomic(dir, path string, data []byte) error {
	if err := s.mkdirs(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tmpPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close(), os.Remove(tmp))
	}
	if err := f.Sync(); err != nil {
		return errors.Join(err, f.Close(), os.Remove(tmp))
	}
	if err := f.Close(); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return syncDir(dir)
}

// mkdirs creates dir and any missing parents below root, fsyncing each new
// directory's parent so the directory entry is durable.
func (s *Store) mkdirs(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) || dir == s.root {
		return err
	}
	parent := filepath.Dir(dir)
	if err := s.mkdirs(parent); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// syncDir fsyncs a directory so entries created or renamed in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// Get reads the whole object.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	path, err := s.checkKey(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if isAbsent(err) {
			return nil, fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
		}
		return nil, fmt.Errorf("objstore/local: get %q: %w", key, err)
	}
	return data, nil
}

// Open opens the object for reading. A Put or Delete meanwhile does not
// change what the reader reads: Put renames a new file into place and
// Delete unlinks it, while the open file keeps its data.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	path, err := s.checkKey(key)
	if err != nil {
		return nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		if isAbsent(err) {
			return nil, 0, fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
		}
		return nil, 0, fmt.Errorf("objstore/local: open %q: %w", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, errors.Join(fmt.Errorf("objstore/local: open %q: %w", key, err), f.Close())
	}
	if fi.IsDir() {
		return nil, 0, errors.Join(fmt.Errorf("%w: %q", objstore.ErrNotFound, key), f.Close())
	}
	return f, fi.Size(), nil
}

// Stat returns the object's size and modification time.
func (s *Store) Stat(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	path, err := s.checkKey(key)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return objstore.ObjectInfo{}, err
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return objstore.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
	case err == nil || isAbsent(err):
		return objstore.ObjectInfo{}, fmt.Errorf("%w: %q", objstore.ErrNotFound, key)
	default:
		return objstore.ObjectInfo{}, fmt.Errorf("objstore/local: stat %q: %w", key, err)
	}
}

// List walks the directory that holds prefix's complete segments and returns
// the matching regular files, sorted by key.
func (s *Store) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	if err := objstore.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	var out []objstore.ObjectInfo
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// Vanished under a concurrent Delete, or the prefix is not a directory.
			if isAbsent(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != start && strings.HasPrefix(name, tmpPrefix) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, tmpPrefix) {
			return nil
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if isAbsent(err) {
				return nil
			}
			return err
		}
		out = append(out, objstore.ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, err
		}
		return nil, fmt.Errorf("objstore/local: list %q: %w", prefix, err)
	}
	slices.SortFunc(out, func(a, b objstore.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// RemoveStaleTemp deletes the temporary files that Puts cut short by a crash
// left behind (List never shows them) in the directory holding prefix's
// complete segments and below, when they were last modified before cutoff,
// and returns what it deleted (Key is the temporary file's path below root,
// in key form). A temporary file younger than cutoff may belong to a Put in
// progress, of this process or of another one using the same root, and is
// kept; so cutoff must lie further back than any Put can take.
func (s *Store) RemoveStaleTemp(ctx context.Context, prefix string, cutoff time.Time) ([]objstore.ObjectInfo, error) {
	if err := objstore.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	start := s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	var stale []string
	var out []objstore.ObjectInfo
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if isAbsent(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if isAbsent(err) {
				return nil
			}
			return err
		}
		if !fi.ModTime().Before(cutoff) {
			return nil
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		stale = append(stale, path)
		out = append(out, objstore.ObjectInfo{Key: filepath.ToSlash(rel), Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("objstore/local: remove stale temporary files under %q: %w", prefix, err)
	}
	for i, path := range stale {
		if err := os.Remove(path); err != nil && !isAbsent(err) {
			return out[:i], fmt.Errorf("objstore/local: remove %s: %w", path, err)
		}
		s.prune(filepath.Dir(path))
	}
	return out, nil
}

// Delete removes the object and prunes parent directories left empty.
func (s *Store) Delete(ctx context.Context, key string) error {
	path, err := s.checkKey(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		if isAbsent(err) {
			return nil
		}
		return fmt.Errorf("objstore/local: delete %q: %w", key, err)
	}
	if fi.IsDir() {
		return nil // a directory is not an object
	}
	if err := os.Remove(path); err != nil && !isAbsent(err) {
		return fmt.Errorf("objstore/local: delete %q: %w", key, err)
	}
	dir := filepath.Dir(path)
	if err := syncDir(dir); err != nil && !isAbsent(err) {
		return fmt.Errorf("objstore/local: delete %q: %w", key, err)
	}
	s.prune(dir)
	return nil
}

// prune removes dir and its ancestors below root while they are empty.
// Failures (a directory not empty, or already gone) just stop it.
func (s *Store) prune(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// isAbsent reports errors that mean "no such object": the path or one of its
// parents is missing, a parent is a file, or the path is a directory.
func isAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}
