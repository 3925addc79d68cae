package mmapcache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// objects is a fake object store that counts its opens.
type objects struct {
	mu    sync.Mutex
	data  map[string][]byte
	opens int
}

func (o *objects) opener(key string) Filler {
	return FromObject(key, func(context.Context) (io.ReadCloser, int64, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.opens++
		b, ok := o.data[key]
		if !ok {
			return nil, 0, os.ErrNotExist
		}
		return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	})
}

func newCache(t *testing.T) (*Cache, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	c, err := Open(t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	return c, &logs
}

// TestMapWritesOnceAndReuses: the first Map downloads the object into the
// documented layout; later Maps (a restart: a new Cache on the same
// directory) map the same file without asking object storage.
func TestMapWritesOnceAndReuses(t *testing.T) {
	c, _ := newCache(t)
	key := "files/index_files/1/2/3/HNSW"
	obj := &objects{data: map[string][]byte{key: []byte("hello, mapped world")}}
	m, err := c.Map(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, []byte("hello, mapped world"), m.Data())
	require.Zero(t, uintptr(unsafe.Pointer(&m.Data()[0]))%4096, "the object starts on a page with pad 0")
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close is idempotent")

	raw, err := os.ReadFile(filepath.Join(c.Dir(), "files/index_files/1/2/3/HNSW"))
	require.NoError(t, err)
	require.Len(t, raw, 4096+19)
	require.Equal(t, "STRMMAP\x00", string(raw[:8]))
	require.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0, 19, 0, 0, 0, 0, 0, 0, 0}, raw[8:24], "version 1, pad 0, n 19")

	c2, err := Open(c.Dir(), c.logger)
	require.NoError(t, err)
	m, err = c2.Map(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, []byte("hello, mapped world"), m.Data())
	require.NoError(t, m.Close())
	require.Equal(t, 1, obj.opens, "the second map reads the cache file only")
}

// TestMalformedRewritten: a cache file that is truncated, or whose header
// is damaged, is written again from object storage, with a warning.
func TestMalformedRewritten(t *testing.T) {
	for name, damage := range map[string]func(p string) error{
		"truncated": func(p string) error { return os.Truncate(p, 4096+3) },
		"header": func(p string) error {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteAt([]byte{7}, 13)
			return errors.Join(err, f.Close())
		},
		"not a cache file": func(p string) error { return os.WriteFile(p, []byte("junk"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			c, logs := newCache(t)
			key := "a/b"
			obj := &objects{data: map[string][]byte{key: []byte("0123456789")}}
			m, err := c.Map(t.Context(), key, obj.opener(key))
			require.NoError(t, err)
			require.NoError(t, m.Close())
			require.NoError(t, damage(c.Path(key)))
			m, err = c.Map(t.Context(), key, obj.opener(key))
			require.NoError(t, err)
			require.Equal(t, []byte("0123456789"), m.Data())
			require.NoError(t, m.Close())
			require.Equal(t, 2, obj.opens)
			require.Contains(t, logs.String(), "mmap cache file damaged")
			require.Contains(t, logs.String(), "key=a/b")
		})
	}
}

// TestRebuild: a copy whose content its reader found damaged is replaced
// from object storage and logged; a shift moves the object within the
// page so that it lines up; the old mapping stays readable until closed.
func TestRebuild(t *testing.T) {
	c, logs := newCache(t)
	key := "k"
	obj := &objects{data: map[string][]byte{key: []byte("good data")}}
	m, err := c.Map(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	m2, err := c.Rebuild(t.Context(), key, obj.opener(key), m, 3, errors.New("checksum mismatch"))
	require.NoError(t, err)
	require.Equal(t, []byte("good data"), m.Data(), "the old mapping still reads its copy")
	require.NoError(t, m.Close())
	require.Equal(t, []byte("good data"), m2.Data())
	require.Equal(t, uintptr(3), uintptr(unsafe.Pointer(&m2.Data()[0]))%4096, "shifted by 3")
	require.Contains(t, logs.String(), "mmap cache file damaged; rebuilt from object storage")
	require.Contains(t, logs.String(), "checksum mismatch")
	m3, err := c.Rebuild(t.Context(), key, obj.opener(key), m2, 2, nil)
	require.NoError(t, err)
	require.Equal(t, uintptr(1), uintptr(unsafe.Pointer(&m3.Data()[0]))%4096, "pads add modulo 4")
	require.NoError(t, errors.Join(m2.Close(), m3.Close()))
	require.Equal(t, 1, strings.Count(logs.String(), "damaged"), "a shift alone is not reported as damage")

	m4, err := c.Map(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, uintptr(1), uintptr(unsafe.Pointer(&m4.Data()[0]))%4096, "the pad is kept for later maps")
	require.NoError(t, m4.Close())

	require.NoError(t, c.Remove(key))
	require.NoError(t, c.Remove(key), "removing a missing copy is fine")
	_, err = os.Stat(c.Path(key))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestFailures: a failed download leaves no file behind, a short object
// is refused, an invalid key is refused, and Open sweeps temporary files.
func TestFailures(t *testing.T) {
	c, _ := newCache(t)
	obj := &objects{data: map[string][]byte{}}
	_, err := c.Map(t.Context(), "missing", obj.opener("missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	short := FromObject("short", func(context.Context) (io.ReadCloser, int64, error) {
		return io.NopCloser(strings.NewReader("abc")), 10, nil
	})
	_, err = c.Map(t.Context(), "short", short)
	require.ErrorContains(t, err, "3 bytes, object storage said 10")
	_, err = c.Map(t.Context(), "../escape", short)
	require.Error(t, err)
	entries, err := os.ReadDir(c.Dir())
	require.NoError(t, err)
	require.Empty(t, entries, "failed writes leave nothing")

	require.NoError(t, os.WriteFile(filepath.Join(c.Dir(), "x"+tmpInfix+"abc"), []byte("partial"), 0o644))
	_, err = Open(c.Dir(), c.logger)
	require.NoError(t, err)
	entries, err = os.ReadDir(c.Dir())
	require.NoError(t, err)
	require.Empty(t, entries, "Open sweeps temporary files")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Map(ctx, "k", (&objects{data: map[string][]byte{"k": []byte("x")}}).opener("k"))
	require.ErrorIs(t, err, context.Canceled)
}

// TestCollect: Collect removes the files keep refuses and the directories
// they leave empty, keeps the others and the temporary files of writers in
// progress, and a mapping of a removed file reads on until it is closed;
// a later Map of a removed key writes it again.
func TestCollect(t *testing.T) {
	c, _ := newCache(t)
	gone, kept := "columns/1/2/3/101", "columns/1/2/4/101"
	idx := "files/index_files/9/1/2/3/HNSW"
	obj := &objects{data: map[string][]byte{gone: []byte("gone"), kept: []byte("kept"), idx: []byte("index")}}
	var maps []*Mapping
	for _, k := range []string{gone, kept, idx} {
		m, err := c.Map(t.Context(), k, obj.opener(k))
		require.NoError(t, err)
		maps = append(maps, m)
	}
	tmp := c.Path("columns/1/2/3/102") + tmpInfix + "abc"
	require.NoError(t, os.WriteFile(tmp, []byte("partial"), 0o644))

	var asked []string
	removed, err := c.Collect(t.Context(), func(key string) bool {
		asked = append(asked, key)
		return key == kept
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{gone, idx}, removed)
	require.ElementsMatch(t, []string{gone, kept, idx}, asked, "temporary files are not offered")
	require.NoFileExists(t, c.Path(gone))
	require.NoDirExists(t, filepath.Join(c.Dir(), "files"), "emptied directories go")
	require.FileExists(t, c.Path(kept))
	require.FileExists(t, tmp, "a writer's temporary file stays")
	require.DirExists(t, c.Dir())

	require.Equal(t, []byte("gone"), maps[0].Data(), "a mapping outlives its removed file")
	require.Equal(t, []byte("index"), maps[2].Data())
	for _, m := range maps {
		require.NoError(t, m.Close())
	}

	m, err := c.Map(t.Context(), idx, obj.opener(idx))
	require.NoError(t, err)
	require.Equal(t, []byte("index"), m.Data())
	require.NoError(t, m.Close())

	removed, err = c.Collect(t.Context(), func(string) bool { return true })
	require.NoError(t, err)
	require.Empty(t, removed)
}

// TestCollectWaitsForAWriter: a removal takes its key's lock, so it waits
// for a Map of the key in progress, and ends when its context does.
func TestCollectWaitsForAWriter(t *testing.T) {
	c, _ := newCache(t)
	key := "columns/1/2/3/101"
	obj := &objects{data: map[string][]byte{key: []byte("data")}}
	m, err := c.Map(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.NoError(t, m.Close())

	unlock, err := c.lock(t.Context(), key)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = c.Collect(ctx, func(string) bool { return false })
	require.ErrorIs(t, err, context.Canceled)
	require.FileExists(t, c.Path(key), "nothing is removed under a writer")
	unlock()

	removed, err := c.Collect(t.Context(), func(string) bool { return false })
	require.NoError(t, err)
	require.Equal(t, []string{key}, removed)
}

// TestOpenFile: OpenFile writes a missing copy once and reads its content
// by position; a later OpenFile reuses it; a truncated copy is rewritten;
// RefillFile replaces a copy whose content was found damaged, while a File
// opened before keeps reading the old copy.
func TestOpenFile(t *testing.T) {
	c, logs := newCache(t)
	key := "files/index_files/1/2/3/DISKANN"
	obj := &objects{data: map[string][]byte{key: []byte("0123456789abcdef")}}
	f, err := c.OpenFile(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, int64(16), f.Size())
	buf := make([]byte, 4)
	n, err := f.ReadAt(buf, 10)
	require.NoError(t, err)
	require.Equal(t, "abcd", string(buf[:n]))
	n, err = f.ReadAt(buf, 14)
	require.ErrorIs(t, err, io.EOF, "a read past the content's end")
	require.Equal(t, "ef", string(buf[:n]))
	_, err = f.ReadAt(buf, 17)
	require.Error(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is idempotent")

	f, err = c.OpenFile(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, 1, obj.opens, "the second open reads the cache file only")

	obj.data[key] = []byte("fresh copy")
	g, err := c.RefillFile(t.Context(), key, obj.opener(key), errors.New("checksum"))
	require.NoError(t, err)
	require.Contains(t, logs.String(), "rebuilt from object storage")
	n, err = f.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "0123", string(buf[:n]), "the old file reads the old copy")
	n, err = g.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "fres", string(buf[:n]))
	require.NoError(t, errors.Join(f.Close(), g.Close()))

	require.NoError(t, os.Truncate(c.Path(key), 4096+3))
	f, err = c.OpenFile(t.Context(), key, obj.opener(key))
	require.NoError(t, err)
	require.Equal(t, int64(10), f.Size())
	require.Equal(t, 3, obj.opens)
	require.NoError(t, f.Close())
}
