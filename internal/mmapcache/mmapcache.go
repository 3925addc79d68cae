package mmapcache

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/strata-db/strata/internal/objstore"
)

const (
	magic   = "STRMMAP\x00"
	version = 1
	// headerSize is where the object's bytes start, before the pad: one
	// page, so that the object's own offsets keep their alignment.
	headerSize = 4096
	// maxPad bounds the pad a header may claim.
	maxPad = 63
	// tmpInfix marks temporary files.
	tmpInfix = ".tmp-"
)

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrMalformed is wrapped by the errors about a cache file that is not a
// complete copy (bad magic, version, pad, checksum or length).
var ErrMalformed = errors.New("mmapcache: malformed cache file")

// Opener opens the object a cache file copies, as object storage does:
// a stream and its length.
type Opener func(ctx context.Context) (io.ReadCloser, int64, error)

// Filler writes the content of a cache file to w: a copy of an object
// (FromObject), or data the caller derives from object storage (a decoded
// column, package colfile).
type Filler func(ctx context.Context, w io.Writer) error

// FromObject is the Filler that copies the object open opens, checking
// that it has the length object storage gave.
func FromObject(key string, open Opener) Filler {
	return func(ctx context.Context, w io.Writer) error {
		r, n, err := open(ctx)
		if err != nil {
			return fmt.Errorf("mmapcache: open %s: %w", key, err)
		}
		defer func() { _ = r.Close() }() // a read error is io.Copy's
		got, err := io.Copy(w, ctxReader{ctx: ctx, r: r})
		if err != nil {
			return fmt.Errorf("mmapcache: copy %s: %w", key, err)
		}
		if got != n {
			return fmt.Errorf("mmapcache: copy %s: %d bytes, object storage said %d", key, got, n)
		}
		return nil
	}
}

// Cache is a directory of local copies of objects, mapped read-only. Its
// methods are safe for concurrent use; calls for the same key are
// serialised, so an object is downloaded once.
type Cache struct {
	dir    string
	logger *slog.Logger

	mu   sync.Mutex
	busy map[string]chan struct{} // keys being mapped or written; closed when done
}

// Open returns the cache kept in dir, creating the directory, and removes
// the temporary files a crash left there.
func Open(dir string, logger *slog.Logger) (*Cache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mmapcache: %w", err)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), tmpInfix) {
			return err
		}
		return os.Remove(p)
	})
	if err != nil {
		return nil, fmt.Errorf("mmapcache: sweep %s: %w", dir, err)
	}
	return &Cache{dir: dir, logger: logger, busy: map[string]chan struct{}{}}, nil
}

// Dir is the directory the cache is kept in.
func (c *Cache) Dir() string { return c.dir }

// Path is where the copy of the object key is kept.
func (c *Cache) Path(key string) string { return filepath.Join(c.dir, filepath.FromSlash(key)) }

// lock serialises the calls for key; the returned func unlocks.
func (c *Cache) lock(ctx context.Context, key string) (func(), error) {
	for {
		c.mu.Lock()
		ch, ok := c.busy[key]
		if !ok {
			ch = make(chan struct{})
			c.busy[key] = ch
			c.mu.Unlock()
			return func() {
				c.mu.Lock()
				delete(c.busy, key)
				c.mu.Unlock()
				close(ch)
			}, nil
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Map maps the cache file key. A file that is missing, or whose header or
// length is malformed, is written first by fill (a malformed one with a
// warning in the log). Map does not check the content: its reader does,
// and calls Rebuild when it is damaged.
func (c *Cache) Map(ctx context.Context, key string, fill Filler) (*Mapping, error) {
	return obtain(ctx, c, key, fill, mapFile)
}

// obtain opens the cache file key with open, writing it first through
// fill when it is missing or malformed (with a warning), under the key's
// lock: Map and OpenFile.
func obtain[T any](ctx context.Context, c *Cache, key string, fill Filler, open func(path string) (T, error)) (T, error) {
	var zero T
	if err := objstore.ValidateKey(key); err != nil {
		return zero, fmt.Errorf("mmapcache: %w", err)
	}
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return zero, err
	}
	defer unlock()
	x, err := open(c.Path(key))
	switch {
	case err == nil:
		return x, nil
	case errors.Is(err, ErrMalformed):
		c.logger.Warn("mmap cache file damaged; rebuilding it from object storage", "key", key, "path", c.Path(key), "err", err)
	case !errors.Is(err, fs.ErrNotExist):
		return zero, err
	}
	if err := c.write(ctx, key, fill, 0); err != nil {
		return zero, err
	}
	return open(c.Path(key))
}

// Rebuild replaces the cache file key with a fresh one from fill and
// maps it: when damaged is not nil (the content of old failed its
// reader's check) it is logged as the reason; shift moves the object that
// many bytes further from old's position (alignment, see Layout). old,
// the mapping that was found wanting, is not closed: the caller closes it.
func (c *Cache) Rebuild(ctx context.Context, key string, fill Filler, old *Mapping, shift int, damaged error) (*Mapping, error) {
	pad := 0
	if old != nil {
		pad = (old.pad + shift) % 4
	}
	return refill(ctx, c, key, fill, pad, damaged, mapFile)
}

// refill writes the cache file key again through fill with pad bytes of
// pad, logging damaged when set, and opens it with open, under the key's
// lock: Rebuild and RefillFile.
func refill[T any](ctx context.Context, c *Cache, key string, fill Filler, pad int, damaged error, open func(path string) (T, error)) (T, error) {
	var zero T
	if err := objstore.ValidateKey(key); err != nil {
		return zero, fmt.Errorf("mmapcache: %w", err)
	}
	unlock, err := c.lock(ctx, key)
	if err != nil {
		return zero, err
	}
	defer unlock()
	if damaged != nil {
		c.logger.Warn("mmap cache file damaged; rebuilt from object storage", "key", key, "path", c.Path(key), "err", damaged)
	}
	if err := c.write(ctx, key, fill, pad); err != nil {
		return zero, err
	}
	return open(c.Path(key))
}

// Remove deletes the cached copy of key, if any. Mappings of it stay
// valid until closed.
func (c *Cache) Remove(key string) error {
	if err := objstore.ValidateKey(key); err != nil {
		return fmt.Errorf("mmapcache: %w", err)
	}
	if err := os.Remove(c.Path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mmapcache: %w", err)
	}
	return nil
}

// Collect removes every cache file whose key keep refuses, and then the
// directories it leaves empty (never dir itself); it returns the keys
// removed. Each removal holds its key's lock, so a Map or Rebuild of the
// key waits for it (and then writes the file again). Temporary files are
// left to the writers that own them. Mappings of a removed file stay
// valid until closed: the kernel frees its blocks once the last mapping is
// gone, so a reader still holding one is never disturbed.
func (c *Cache) Collect(ctx context.Context, keep func(key string) bool) ([]string, error) {
	var keys, dirs []string
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != c.dir {
				dirs = append(dirs, p)
			}
			return nil
		}
		if strings.Contains(d.Name(), tmpInfix) {
			return nil
		}
		rel, err := filepath.Rel(c.dir, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); !keep(key) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mmapcache: collect %s: %w", c.dir, err)
	}
	var removed []string
	var errs []error
	for _, key := range keys {
		unlock, err := c.lock(ctx, key)
		if err != nil {
			return removed, err
		}
		err = os.Remove(c.Path(key))
		unlock()
		switch {
		case err == nil:
			removed = append(removed, key)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("mmapcache: %w", err))
		}
	}
	// Deepest first; one that is not empty (or that a writer has just
	// filled) stays.
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i])
	}
	return removed, errors.Join(errs...)
}

// header returns the header page of a copy of n bytes with pad p.
func header(n int64, pad int) []byte {
	h := make([]byte, headerSize+pad)
	copy(h, magic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], version)
	le.PutUint32(h[12:], uint32(pad))
	le.PutUint64(h[16:], uint64(n))
	le.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return h
}

// write writes the cache file key through fill into a temporary file
// after the header and pad bytes of padding, and renames it over the old
// file.
func (c *Cache) write(ctx context.Context, key string, fill Filler, pad int) (err error) {
	path := c.Path(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("mmapcache: %w", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path + tmpInfix + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// Collect removed the directory, empty, since MkdirAll.
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("mmapcache: %w", err)
		}
		f, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	}
	if err != nil {
		return fmt.Errorf("mmapcache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// The header is written last, once the length is known.
	if _, err := f.Seek(int64(headerSize+pad), io.SeekStart); err != nil {
		return fmt.Errorf("mmapcache: write %s: %w", tmp, err)
	}
	cw := &countingWriter{w: f}
	bw := bufio.NewWriterSize(cw, 1<<16)
	if err := fill(ctx, bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("mmapcache: write %s: %w", tmp, err)
	}
	if _, err := f.WriteAt(header(cw.n, pad), 0); err != nil {
		return fmt.Errorf("mmapcache: write %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mmapcache: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("mmapcache: %w", err)
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ctxReader stops a copy once ctx ends.
type ctxReader struct {
	ctx context.Context //nolint:containedctx // lives for one io.Copy
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// Mapping is a cache file mapped read-only.
type Mapping struct {
	path string
	all  []byte // the whole mapping
	data []byte // the object's bytes within it
	pad  int

	once sync.Once
	err  error
}

// mapFile maps the cache file at path after checking its header and
// length (ErrMalformed otherwise).
func mapFile(path string) (*Mapping, error) {
	f, st, pad, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only; the mapping outlives it
	all, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmapcache: map %s: %w", path, err)
	}
	return &Mapping{path: path, all: all, data: all[headerSize+pad:], pad: int(pad)}, nil
}

// openChecked opens the cache file at path and checks its header and
// length (ErrMalformed otherwise); it returns the open file, its size and
// the pad.
func openChecked(path string) (_ *os.File, _ os.FileInfo, _ int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("mmapcache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("mmapcache: %w", err)
	}
	var h [28]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %s: header: %w", ErrMalformed, path, err)
	}
	le := binary.LittleEndian
	pad, n := int64(le.Uint32(h[12:])), le.Uint64(h[16:])
	switch {
	case string(h[:8]) != magic:
		return nil, nil, 0, fmt.Errorf("%w: %s: bad magic %q", ErrMalformed, path, h[:8])
	case le.Uint32(h[24:]) != crc32.Checksum(h[:24], castagnoli):
		return nil, nil, 0, fmt.Errorf("%w: %s: header checksum", ErrMalformed, path)
	case le.Uint32(h[8:]) != version:
		return nil, nil, 0, fmt.Errorf("%w: %s: version %d", ErrMalformed, path, le.Uint32(h[8:]))
	case pad > maxPad:
		return nil, nil, 0, fmt.Errorf("%w: %s: pad %d", ErrMalformed, path, pad)
	case n > uint64(st.Size()) || st.Size() != headerSize+pad+int64(n):
		return nil, nil, 0, fmt.Errorf("%w: %s: %d bytes, the header implies %d", ErrMalformed, path, st.Size(), headerSize+pad+int64(n))
	}
	return f, st, pad, nil
}

// File is a cache file opened for positioned reads (pread) of its
// content, not mapped: what a reader reads passes through the page cache,
// which the kernel may drop under memory pressure, and never counts
// towards the process's resident memory as a mapping's pages do. Its
// methods are safe for concurrent use.
type File struct {
	path string
	f    *os.File
	base int64 // the content's offset in the file
	n    int64 // the content's length

	once sync.Once
	err  error
}

// openFile opens the cache file at path for reads after checking its
// header and length (ErrMalformed otherwise).
func openFile(path string) (*File, error) {
	f, st, pad, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f, base: headerSize + pad, n: st.Size() - headerSize - pad}, nil
}

// ReadAt reads len(p) bytes of the content from offset off (io.ReaderAt).
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > f.n {
		return 0, fmt.Errorf("mmapcache: read at %d of a %d-byte file", off, f.n)
	}
	want := len(p)
	if rest := f.n - off; int64(want) > rest {
		p = p[:rest]
	}
	n, err := f.f.ReadAt(p, f.base+off)
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// Size is the content's length.
func (f *File) Size() int64 { return f.n }

// Path is the cache file read.
func (f *File) Path() string { return f.path }

// Close closes the file. It is idempotent.
func (f *File) Close() error {
	f.once.Do(func() {
		if err := f.f.Close(); err != nil {
			f.err = fmt.Errorf("mmapcache: close %s: %w", f.path, err)
		}
	})
	return f.err
}

// OpenFile opens the cache file key for positioned reads (File), writing
// it first through fill when it is missing or its header or length is
// malformed, as Map does. The reader checks the content and calls
// RefillFile when it is damaged.
func (c *Cache) OpenFile(ctx context.Context, key string, fill Filler) (*File, error) {
	return obtain(ctx, c, key, fill, openFile)
}

// RefillFile replaces the cache file key with a fresh one from fill,
// logging damaged (the reason the old content failed its reader's check),
// and opens it for reads. Files opened earlier keep reading the old copy
// until closed.
func (c *Cache) RefillFile(ctx context.Context, key string, fill Filler, damaged error) (*File, error) {
	return refill(ctx, c, key, fill, 0, damaged, openFile)
}

// Data is the object's bytes, read-only. It must not be used after Close.
func (m *Mapping) Data() []byte { return m.data }

// Path is the cache file mapped.
func (m *Mapping) Path() string { return m.path }

// Close unmaps the file. It is idempotent.
func (m *Mapping) Close() error {
	m.once.Do(func() {
		if err := unix.Munmap(m.all); err != nil {
			m.err = fmt.Errorf("mmapcache: unmap %s: %w", m.path, err)
		}
		m.all, m.data = nil, nil
	})
	return m.err
}
