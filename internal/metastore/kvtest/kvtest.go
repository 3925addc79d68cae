// Package kvtest is the conformance suite for metastore.KV implementations.
// Every implementation runs RunConformance from its own tests.
package kvtest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/metastore"
)

// OpenFunc returns a fresh, empty store for one test. It registers any
// cleanup (including Close, which is idempotent) with t.Cleanup.
type OpenFunc func(t *testing.T) metastore.KV

// ReopenFunc opens the data of kv again after the suite has closed kv, as a
// restarted process would. The suite closes the returned store itself, but
// implementations should still register cleanup with t.Cleanup.
type ReopenFunc func(t *testing.T, kv metastore.KV) metastore.KV

// RunConformance runs the suite against the implementation made by open.
// reopen may be nil, which skips the persistence tests.
func RunConformance(t *testing.T, open OpenFunc, reopen ReopenFunc) {
	t.Helper()
	t.Run("GetPutDelete", func(t *testing.T) { testGetPutDelete(t, open) })
	t.Run("ValuesAreCopies", func(t *testing.T) { testValuesAreCopies(t, open) })
	t.Run("Scan", func(t *testing.T) { testScan(t, open) })
	t.Run("DeletePrefix", func(t *testing.T) { testDeletePrefix(t, open) })
	t.Run("Guards", func(t *testing.T) { testGuards(t, open) })
	t.Run("InvalidTxn", func(t *testing.T) { testInvalidTxn(t, open) })
	t.Run("ManyOps", func(t *testing.T) { testManyOps(t, open) })
	t.Run("ConcurrentCAS", func(t *testing.T) { testConcurrentCAS(t, open) })
	t.Run("ConcurrentDisjoint", func(t *testing.T) { testConcurrentDisjoint(t, open) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, open) })
	t.Run("Closed", func(t *testing.T) { testClosed(t, open) })
	if reopen != nil {
		t.Run("Persistence", func(t *testing.T) { testPersistence(t, open, reopen) })
	}
}

func put(t *testing.T, kv metastore.KV, key, value string) {
	t.Helper()
	require.NoError(t, kv.Txn(context.Background(), metastore.Put(key, []byte(value))))
}

func requireValue(t *testing.T, kv metastore.KV, key, want string) {
	t.Helper()
	got, err := kv.Get(context.Background(), key)
	require.NoError(t, err, "get %q", key)
	require.Equal(t, want, string(got), "value of %q", key)
}

func requireAbsent(t *testing.T, kv metastore.KV, key string) {
	t.Helper()
	_, err := kv.Get(context.Background(), key)
	require.ErrorIs(t, err, metastore.ErrNotFound, "get %q", key)
}

func scanKeys(t *testing.T, kv metastore.KV, prefix string) []string {
	t.Helper()
	kvs, err := kv.Scan(context.Background(), prefix)
	require.NoError(t, err)
	keys := make([]string, 0, len(kvs))
	for _, e := range kvs {
		keys = append(keys, e.Key)
	}
	return keys
}

func testGetPutDelete(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)

	requireAbsent(t, kv, "a")
	put(t, kv, "a", "1")
	requireValue(t, kv, "a", "1")
	put(t, kv, "a", "2")
	requireValue(t, kv, "a", "2")

	// An empty value is present, and distinct from absence; nil stores empty.
	require.NoError(t, kv.Txn(ctx, metastore.Put("empty", nil)))
	got, err := kv.Get(ctx, "empty")
	require.NoError(t, err)
	require.Empty(t, got)
	require.NoError(t, kv.Txn(ctx, metastore.IfEquals("empty", []byte{})))

	// Binary values and unicode keys round-trip exactly.
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	require.NoError(t, kv.Txn(ctx, metastore.Put("bin/ключ/✓", bin)))
	got, err = kv.Get(ctx, "bin/ключ/✓")
	require.NoError(t, err)
	require.Equal(t, bin, got)

	require.NoError(t, kv.Txn(ctx, metastore.Delete("a")))
	requireAbsent(t, kv, "a")
	require.NoError(t, kv.Txn(ctx, metastore.Delete("a")), "deleting an absent key is not an error")
	require.NoError(t, kv.Txn(ctx), "an empty txn is a no-op")

	// Several mutations in one txn.
	require.NoError(t, kv.Txn(ctx,
		metastore.Put("x", []byte("1")),
		metastore.Put("y", []byte("2")),
		metastore.Delete("empty"),
	))
	requireValue(t, kv, "x", "1")
	requireValue(t, kv, "y", "2")
	requireAbsent(t, kv, "empty")
}

func testValuesAreCopies(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)

	in := []byte("abc")
	require.NoError(t, kv.Txn(ctx, metastore.Put("k", in)))
	in[0] = 'X'
	requireValue(t, kv, "k", "abc")

	out, err := kv.Get(ctx, "k")
	require.NoError(t, err)
	out[0] = 'Y'
	requireValue(t, kv, "k", "abc")

	kvs, err := kv.Scan(ctx, "k")
	require.NoError(t, err)
	require.Len(t, kvs, 1)
	kvs[0].Value[0] = 'Z'
	requireValue(t, kv, "k", "abc")
}

func testScan(t *testing.T, open OpenFunc) {
	kv := open(t)
	keys := []string{"a/2", "a/10", "a/1", "a/1/x", "a/1/y", "a0", "a", "b/1", "a/10/z", "a/", "A/1"}
	for i, k := range keys {
		put(t, kv, k, fmt.Sprint(i))
	}

	tests := []struct {
		prefix string
		want   []string
	}{
		{prefix: "a/1", want: []string{"a/1", "a/1/x", "a/1/y", "a/10", "a/10/z"}},
		{prefix: "a/1/", want: []string{"a/1/x", "a/1/y"}},
		{prefix: "a/10", want: []string{"a/10", "a/10/z"}},
		{prefix: "a/", want: []string{"a/", "a/1", "a/1/x", "a/1/y", "a/10", "a/10/z", "a/2"}},
		{prefix: "a", want: []string{"a", "a/", "a/1", "a/1/x", "a/1/y", "a/10", "a/10/z", "a/2", "a0"}},
		{prefix: "b", want: []string{"b/1"}},
		{prefix: "c", want: []string{}},
		{prefix: "a/1/x/", want: []string{}},
		{prefix: "", want: []string{"A/1", "a", "a/", "a/1", "a/1/x", "a/1/y", "a/10", "a/10/z", "a/2", "a0", "b/1"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("prefix=%q", tc.prefix), func(t *testing.T) {
			require.Equal(t, tc.want, scanKeys(t, kv, tc.prefix))
		})
	}

	kvs, err := kv.Scan(context.Background(), "a/1/")
	require.NoError(t, err)
	require.Equal(t, []metastore.KeyValue{
		{Key: "a/1/x", Value: []byte("3")},
		{Key: "a/1/y", Value: []byte("4")},
	}, kvs)

	// Keys whose bytes sort above the prefix's last byte (0xff edge).
	put(t, kv, "p\xff", "1")
	put(t, kv, "p\xff\xff", "2")
	put(t, kv, "q", "3")
	require.Equal(t, []string{"p\xff", "p\xff\xff"}, scanKeys(t, kv, "p\xff"))
}

func testDeletePrefix(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	tests := []struct {
		name   string
		prefix string
		left   []string
	}{
		{name: "directory", prefix: "a/1/", left: []string{"a/1", "a/10", "a/10/z", "a/2", "b"}},
		{name: "bare", prefix: "a/1", left: []string{"a/2", "b"}},
		{name: "no-match", prefix: "c", left: []string{"a/1", "a/1/x", "a/1/y", "a/10", "a/10/z", "a/2", "b"}},
		{name: "exact-key", prefix: "a/10/z", left: []string{"a/1", "a/1/x", "a/1/y", "a/10", "a/2", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := open(t)
			for _, k := range []string{"a/1", "a/1/x", "a/1/y", "a/10", "a/10/z", "a/2", "b"} {
				put(t, kv, k, "v")
			}
			require.NoError(t, kv.Txn(ctx, metastore.DeletePrefix(tc.prefix)))
			require.Equal(t, tc.left, scanKeys(t, kv, ""))
		})
	}

	t.Run("with-put-elsewhere", func(t *testing.T) {
		kv := open(t)
		put(t, kv, "seg/1/a", "v")
		put(t, kv, "seg/1/b", "v")
		require.NoError(t, kv.Txn(ctx, metastore.DeletePrefix("seg/1/"), metastore.Put("dropped/1", []byte("x"))))
		require.Equal(t, []string{"dropped/1"}, scanKeys(t, kv, ""))
	})
}

func testGuards(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	tests := []struct {
		name    string
		ops     []metastore.Op
		wantErr error
		want    map[string]string // keys that must hold these values afterwards
		absent  []string          // keys that must be absent afterwards
	}{
		{
			name:   "if-absent holds",
			ops:    []metastore.Op{metastore.IfAbsent("new"), metastore.Put("new", []byte("n")), metastore.Put("other", []byte("o"))},
			want:   map[string]string{"new": "n", "other": "o", "have": "h"},
			absent: nil,
		},
		{
			name:    "if-absent fails",
			ops:     []metastore.Op{metastore.Put("other", []byte("o")), metastore.IfAbsent("have"), metastore.Put("have", []byte("X"))},
			wantErr: metastore.ErrConflict,
			want:    map[string]string{"have": "h"},
			absent:  []string{"other"},
		},
		{
			name: "if-equals holds",
			ops:  []metastore.Op{metastore.IfEquals("have", []byte("h")), metastore.Put("have", []byte("h2")), metastore.Delete("del")},
			want: map[string]string{"have": "h2"}, absent: []string{"del"},
		},
		{
			name:    "if-equals wrong value",
			ops:     []metastore.Op{metastore.IfEquals("have", []byte("nope")), metastore.Put("have", []byte("X")), metastore.Delete("del")},
			wantErr: metastore.ErrConflict,
			want:    map[string]string{"have": "h", "del": "d"},
		},
		{
			name:    "if-equals prefix of value",
			ops:     []metastore.Op{metastore.IfEquals("have", []byte("")), metastore.Put("x", []byte("X"))},
			wantErr: metastore.ErrConflict,
			want:    map[string]string{"have": "h"}, absent: []string{"x"},
		},
		{
			name:    "if-equals absent key",
			ops:     []metastore.Op{metastore.IfEquals("missing", []byte("")), metastore.Put("x", []byte("X"))},
			wantErr: metastore.ErrConflict,
			absent:  []string{"missing", "x"},
		},
		{
			name:    "one false guard of several",
			ops:     []metastore.Op{metastore.IfEquals("have", []byte("h")), metastore.IfAbsent("new"), metastore.IfAbsent("del"), metastore.DeletePrefix("d")},
			wantErr: metastore.ErrConflict,
			want:    map[string]string{"have": "h", "del": "d"},
		},
		{
			name: "guards see state before mutations",
			ops:  []metastore.Op{metastore.Put("new", []byte("n")), metastore.IfAbsent("new"), metastore.Delete("have"), metastore.IfEquals("have", []byte("h"))},
			want: map[string]string{"new": "n", "del": "d"}, absent: []string{"have"},
		},
		{
			name: "guards only",
			ops:  []metastore.Op{metastore.IfEquals("have", []byte("h")), metastore.IfAbsent("new")},
			want: map[string]string{"have": "h", "del": "d"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := open(t)
			put(t, kv, "have", "h")
			put(t, kv, "del", "d")
			err := kv.Txn(ctx, tc.ops...)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			for k, v := range tc.want {
				requireValue(t, kv, k, v)
			}
			for _, k := range tc.absent {
				requireAbsent(t, kv, k)
			}
		})
	}
}

func testInvalidTxn(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	tests := []struct {
		name string
		ops  []metastore.Op
	}{
		{name: "empty put key", ops: []metastore.Op{metastore.Put("ok", nil), metastore.Put("", []byte("x"))}},
		{name: "empty delete key", ops: []metastore.Op{metastore.Put("ok", nil), metastore.Delete("")}},
		{name: "empty prefix", ops: []metastore.Op{metastore.Put("ok", nil), metastore.DeletePrefix("")}},
		{name: "empty guard key", ops: []metastore.Op{metastore.IfAbsent(""), metastore.Put("ok", nil)}},
		{name: "zero op", ops: []metastore.Op{metastore.Put("ok", nil), {}}},
		{name: "put twice", ops: []metastore.Op{metastore.Put("ok", nil), metastore.Put("ok", []byte("2"))}},
		{name: "put and delete", ops: []metastore.Op{metastore.Put("ok", nil), metastore.Delete("ok")}},
		{name: "put under delete-prefix", ops: []metastore.Op{metastore.DeletePrefix("o"), metastore.Put("ok", nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := open(t)
			put(t, kv, "keep", "k")
			require.ErrorIs(t, kv.Txn(ctx, tc.ops...), metastore.ErrInvalidTxn)
			requireAbsent(t, kv, "ok")
			requireValue(t, kv, "keep", "k")
		})
	}
}

func testManyOps(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)
	const n = 100 // below etcd's default limit of 128 operations per txn
	ops := make([]metastore.Op, 0, n)
	for i := range n {
		ops = append(ops, metastore.Put(fmt.Sprintf("many/%03d", i), []byte(fmt.Sprint(i))))
	}
	require.NoError(t, kv.Txn(ctx, ops...))
	kvs, err := kv.Scan(ctx, "many/")
	require.NoError(t, err)
	require.Len(t, kvs, n)
	for i, e := range kvs {
		require.Equal(t, fmt.Sprintf("many/%03d", i), e.Key)
		require.Equal(t, fmt.Sprint(i), string(e.Value))
	}
}

// testConcurrentCAS increments one counter from many goroutines with
// read + IfEquals; no increment may be lost.
func testConcurrentCAS(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)
	const workers, perWorker = 8, 20
	enc := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	require.NoError(t, kv.Txn(ctx, metastore.Put("counter", enc(0))))

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; {
				cur, err := kv.Get(ctx, "counter")
				if err != nil {
					errs <- err
					return
				}
				next := binary.BigEndian.Uint64(cur) + 1
				err = kv.Txn(ctx,
					metastore.IfEquals("counter", cur),
					metastore.Put("counter", enc(next)),
					metastore.Put(fmt.Sprintf("log/%d/%d", w, i), enc(next)),
				)
				switch {
				case err == nil:
					i++
				case !isConflict(err):
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := kv.Get(ctx, "counter")
	require.NoError(t, err)
	require.Equal(t, uint64(workers*perWorker), binary.BigEndian.Uint64(got))

	// Every successful increment logged a distinct value.
	kvs, err := kv.Scan(ctx, "log/")
	require.NoError(t, err)
	require.Len(t, kvs, workers*perWorker)
	seen := make(map[uint64]bool, len(kvs))
	for _, e := range kvs {
		v := binary.BigEndian.Uint64(e.Value)
		require.False(t, seen[v], "value %d logged twice", v)
		seen[v] = true
	}
}

func isConflict(err error) bool {
	return errors.Is(err, metastore.ErrConflict)
}

func testConcurrentDisjoint(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)
	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				key := fmt.Sprintf("w/%d/%02d", w, i)
				if err := kv.Txn(ctx, metastore.IfAbsent(key), metastore.Put(key, []byte(key))); err != nil {
					errs <- err
				}
				if _, err := kv.Scan(ctx, fmt.Sprintf("w/%d/", w)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, scanKeys(t, kv, "w/"), workers*perWorker)
}

func testCanceled(t *testing.T, open OpenFunc) {
	kv := open(t)
	put(t, kv, "k", "v")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := kv.Get(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = kv.Scan(ctx, "")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, kv.Txn(ctx, metastore.Put("k", []byte("changed"))), context.Canceled)
	requireValue(t, kv, "k", "v")
}

func testClosed(t *testing.T, open OpenFunc) {
	ctx := context.Background()
	kv := open(t)
	put(t, kv, "k", "v")
	require.NoError(t, kv.Close())
	require.NoError(t, kv.Close(), "Close is idempotent")
	_, err := kv.Get(ctx, "k")
	require.ErrorIs(t, err, metastore.ErrClosed)
	_, err = kv.Scan(ctx, "")
	require.ErrorIs(t, err, metastore.ErrClosed)
	require.ErrorIs(t, kv.Txn(ctx, metastore.Put("k", nil)), metastore.ErrClosed)
}

func testPersistence(t *testing.T, open OpenFunc, reopen ReopenFunc) {
	ctx := context.Background()
	kv := open(t)
	put(t, kv, "p/1", "one")
	put(t, kv, "p/2", "two")
	put(t, kv, "p/3", "three")
	require.NoError(t, kv.Txn(ctx, metastore.Delete("p/2"), metastore.Put("p/4", []byte("four"))))
	require.ErrorIs(t, kv.Txn(ctx, metastore.IfAbsent("p/1"), metastore.Put("p/5", []byte("five"))), metastore.ErrConflict)
	require.NoError(t, kv.Close())

	kv2 := reopen(t, kv)
	require.Equal(t, []string{"p/1", "p/3", "p/4"}, scanKeys(t, kv2, "p/"))
	requireValue(t, kv2, "p/1", "one")
	requireValue(t, kv2, "p/4", "four")
	put(t, kv2, "p/6", "six")
	require.NoError(t, kv2.Close())

	kv3 := reopen(t, kv)
	require.Equal(t, []string{"p/1", "p/3", "p/4", "p/6"}, scanKeys(t, kv3, "p/"))
	require.NoError(t, kv3.Close())
}
