// Package objtest is the conformance suite for objstore.Store
// implementations. Every implementation runs RunConformance from its tests.
package objtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/objstore"
)

// OpenFunc returns a fresh, empty store for one test and registers any
// cleanup with t.Cleanup.
type OpenFunc func(t *testing.T) objstore.Store

// RunConformance runs the suite against the implementation made by open.
func RunConformance(t *testing.T, open OpenFunc) {
	t.Helper()
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, open) })
	t.Run("Stat", func(t *testing.T) { testStat(t, open) })
	t.Run("Open", func(t *testing.T) { testOpen(t, open) })
	t.Run("List", func(t *testing.T) { testList(t, open) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open) })
	t.Run("InvalidKeys", func(t *testing.T) { testInvalidKeys(t, open) })
	t.Run("ConcurrentOverwrite", func(t *testing.T) { testConcurrentOverwrite(t, open) })
	t.Run("ConcurrentPutDelete", func(t *testing.T) { testConcurrentPutDelete(t, open) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, open) })
}

func put(t *testing.T, s objstore.Store, key, data string) {
	t.Helper()
	require.NoError(t, s.Put(context.Background(), key, []byte(data)), "put %q", key)
}

func listKeys(t *testing.T, s objstore.Store, prefix string) []string {
	t.Helper()
	infos, err := s.List(context.Background(), prefix)
	require.NoError(t, err, "list %q", prefix)
	keys := make([]string, 0, len(infos))
	for _, info := range infos {
		keys = append(keys, info.Key)
	}
	return keys
}

func testPutGet(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	tests := []struct {
		name string
		key  string
		data []byte
	}{
		{name: "milvus path", key: "files/insert_log/1/2/3/100/7", data: []byte("binlog")},
		{name: "single segment", key: "top", data: []byte("x")},
		{name: "empty object", key: "e/empty", data: []byte{}},
		{name: "nil data", key: "e/nil", data: nil},
		{name: "binary", key: "bin/all-bytes", data: bin},
		{name: "large", key: "big/3MiB", data: big},
		{name: "dots and dashes", key: "a.b/c-d_e/.hidden/f.g", data: []byte("ok")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			_, err := s.Get(ctx, tc.key)
			require.ErrorIs(t, err, objstore.ErrNotFound)

			in := bytes.Clone(tc.data)
			require.NoError(t, s.Put(ctx, tc.key, in))
			if len(in) > 0 {
				in[0]++ // the store must not keep the caller's buffer
			}
			got, err := s.Get(ctx, tc.key)
			require.NoError(t, err)
			require.Len(t, got, len(tc.data))
			require.True(t, bytes.Equal(tc.data, got), "content differs")

			put(t, s, tc.key, "replaced")
			got, err = s.Get(ctx, tc.key)
			require.NoError(t, err)
			require.Equal(t, "replaced", string(got))
		})
	}
}

func testStat(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	before := time.Now().Add(-2 * time.Minute) // tolerate coarse clocks and clock skew
	put(t, s, "stat/a", "hello")
	put(t, s, "stat/empty", "")

	info, err := s.Stat(ctx, "stat/a")
	require.NoError(t, err)
	require.Equal(t, "stat/a", info.Key)
	require.Equal(t, int64(5), info.Size)
	require.True(t, info.ModTime.After(before), "mod time %v", info.ModTime)
	require.True(t, info.ModTime.Before(time.Now().Add(2*time.Minute)), "mod time %v", info.ModTime)

	info, err = s.Stat(ctx, "stat/empty")
	require.NoError(t, err)
	require.Equal(t, int64(0), info.Size)

	for _, key := range []string{"stat/missing", "stat", "stat/a/below"} {
		t.Run(key, func(t *testing.T) {
			_, err := s.Stat(ctx, key)
			require.ErrorIs(t, err, objstore.ErrNotFound)
			_, err = s.Get(ctx, key)
			require.ErrorIs(t, err, objstore.ErrNotFound)
		})
	}
}

// testOpen checks that Open streams what Get returns, with the object's
// size, and that a reader opened before an overwrite or a delete still
// reads the object it opened or fails, never a mix.
func testOpen(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	require.NoError(t, s.Put(ctx, "open/big", big))
	put(t, s, "open/empty", "")

	r, size, err := s.Open(ctx, "open/big")
	require.NoError(t, err)
	require.Equal(t, int64(len(big)), size)
	head := make([]byte, 16)
	_, err = io.ReadFull(r, head)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "open/big", []byte("replaced")))
	rest, err := io.ReadAll(r)
	if err == nil {
		require.True(t, bytes.Equal(big, append(head, rest...)), "a reader saw a mix of two versions")
	}
	require.NoError(t, r.Close())

	r, size, err = s.Open(ctx, "open/empty")
	require.NoError(t, err)
	require.Zero(t, size)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, r.Close())

	for _, key := range []string{"open/missing", "open", "open/big/below"} {
		_, _, err := s.Open(ctx, key)
		require.ErrorIs(t, err, objstore.ErrNotFound, key)
	}
	_, _, err = s.Open(ctx, "../escape")
	require.ErrorIs(t, err, objstore.ErrInvalidKey)
}

func testList(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	keys := []string{"a/2", "a/10/z", "a/1/x", "a/1/y/deep/er", "a0", "a.b", "a/1.5", "b/1", "A/1", "a-", "a/1x"}
	for i, k := range keys {
		put(t, s, k, fmt.Sprint(i))
	}

	tests := []struct {
		prefix string
		want   []string
	}{
		{prefix: "", want: []string{"A/1", "a-", "a.b", "a/1.5", "a/1/x", "a/1/y/deep/er", "a/10/z", "a/1x", "a/2", "a0", "b/1"}},
		{prefix: "a", want: []string{"a-", "a.b", "a/1.5", "a/1/x", "a/1/y/deep/er", "a/10/z", "a/1x", "a/2", "a0"}},
		{prefix: "a/", want: []string{"a/1.5", "a/1/x", "a/1/y/deep/er", "a/10/z", "a/1x", "a/2"}},
		{prefix: "a/1", want: []string{"a/1.5", "a/1/x", "a/1/y/deep/er", "a/10/z", "a/1x"}},
		{prefix: "a/1/", want: []string{"a/1/x", "a/1/y/deep/er"}},
		{prefix: "a/10", want: []string{"a/10/z"}},
		{prefix: "a/1/y/d", want: []string{"a/1/y/deep/er"}},
		{prefix: "a/1/x", want: []string{"a/1/x"}},
		{prefix: "a/1/x/", want: []string{}},
		{prefix: "c", want: []string{}},
		{prefix: "c/d/", want: []string{}},
		{prefix: "b/1", want: []string{"b/1"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("prefix=%q", tc.prefix), func(t *testing.T) {
			require.Equal(t, tc.want, listKeys(t, s, tc.prefix))
		})
	}

	infos, err := s.List(ctx, "a/1/")
	require.NoError(t, err)
	require.Len(t, infos, 2)
	require.Equal(t, int64(len("2")), infos[0].Size)
	require.False(t, infos[0].ModTime.IsZero())

	t.Run("invalid prefix", func(t *testing.T) {
		for _, p := range []string{"/a", "a//b", "../", "a/../b/"} {
			_, err := s.List(ctx, p)
			require.ErrorIs(t, err, objstore.ErrInvalidKey, "prefix %q", p)
		}
	})
}

func testDelete(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	put(t, s, "d/1/a", "x")
	put(t, s, "d/1/b", "x")
	put(t, s, "d/2/c", "x")

	require.NoError(t, s.Delete(ctx, "d/1/a"))
	_, err := s.Get(ctx, "d/1/a")
	require.ErrorIs(t, err, objstore.ErrNotFound)
	require.Equal(t, []string{"d/1/b", "d/2/c"}, listKeys(t, s, ""))

	require.NoError(t, s.Delete(ctx, "d/1/a"), "deleting an absent key is not an error")
	require.NoError(t, s.Delete(ctx, "never/existed/at/all"))
	require.NoError(t, s.Delete(ctx, "d/1/b"))
	require.NoError(t, s.Delete(ctx, "d"), "a prefix is not an object")
	require.Equal(t, []string{"d/2/c"}, listKeys(t, s, ""))

	// The namespace is reusable after everything under a prefix went away.
	put(t, s, "d/1/a", "again")
	require.Equal(t, []string{"d/1/a", "d/2/c"}, listKeys(t, s, "d/"))
	require.NoError(t, s.Delete(ctx, "d/1/a"))
	require.NoError(t, s.Delete(ctx, "d/2/c"))
	require.Empty(t, listKeys(t, s, ""))
}

func testInvalidKeys(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	for _, key := range []string{"", "/a", "a/", "a//b", "..", "a/../b", "../a", ".", "a/./b", "a\x00b"} {
		t.Run(fmt.Sprintf("%q", key), func(t *testing.T) {
			require.ErrorIs(t, s.Put(ctx, key, []byte("x")), objstore.ErrInvalidKey)
			_, err := s.Get(ctx, key)
			require.ErrorIs(t, err, objstore.ErrInvalidKey)
			_, err = s.Stat(ctx, key)
			require.ErrorIs(t, err, objstore.ErrInvalidKey)
			require.ErrorIs(t, s.Delete(ctx, key), objstore.ErrInvalidKey)
		})
	}
	require.Empty(t, listKeys(t, s, ""))
}

// testConcurrentOverwrite checks atomicity: readers racing with writers of
// one key only ever see one complete version.
func testConcurrentOverwrite(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	const writers, rounds, size = 4, 10, 64 << 10
	version := func(w, r int) []byte { return bytes.Repeat([]byte{byte(w*rounds + r)}, size) }
	require.NoError(t, s.Put(ctx, "race/obj", version(0, 0)))

	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if err := s.Put(ctx, "race/obj", version(w, r)); err != nil {
					errs <- err
				}
				if err := s.Put(ctx, fmt.Sprintf("race/w%d/%d", w, r), version(w, r)); err != nil {
					errs <- err
				}
			}
		}()
	}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := s.Get(ctx, "race/obj")
			if err != nil {
				errs <- err
				return
			}
			if len(data) != size || !bytes.Equal(data, bytes.Repeat(data[:1], size)) {
				errs <- fmt.Errorf("torn read: %d bytes", len(data))
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, listKeys(t, s, "race/w"), writers*rounds)
}

func testConcurrentPutDelete(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	s := open(t)
	const workers, rounds = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Siblings in shared directories: deleting one (and pruning
			// empty directories) must not break a concurrent Put of another.
			for r := range rounds {
				key := fmt.Sprintf("shared/%d/%d", r%3, w)
				if err := s.Put(ctx, key, []byte(key)); err != nil {
					errs <- err
					continue
				}
				if err := s.Delete(ctx, key); err != nil {
					errs <- err
				}
			}
			if err := s.Put(ctx, fmt.Sprintf("shared/final/%d", w), []byte("x")); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, listKeys(t, s, "shared/"), workers)
}

func testCanceled(t *testing.T, open OpenFunc) {
	s := open(t)
	put(t, s, "c/k", "v")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Put(ctx, "c/new", []byte("x")), context.Canceled)
	_, err := s.Get(ctx, "c/k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Stat(ctx, "c/k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.List(ctx, "")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Delete(ctx, "c/k"), context.Canceled)
	require.Equal(t, []string{"c/k"}, listKeys(t, s, ""))
}
