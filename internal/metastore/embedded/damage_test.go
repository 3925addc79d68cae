package embedded_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

// fill writes n keys with distinctive values into a new store at path and
// closes it; it returns what Scan("") saw.
func fill(t *testing.T, path string, n int) []metastore.KeyValue {
	t.Helper()
	s, err := embedded.Open(path, nil)
	require.NoError(t, err)
	ctx := context.Background()
	for i := 0; i < n; i += 10 {
		var ops []metastore.Op
		for j := i; j < min(i+10, n); j++ {
			ops = append(ops, metastore.Put(fmt.Sprintf("root/collection/%04d", j), []byte(fmt.Sprintf("value-%04d-%s", j, bytes.Repeat([]byte{'x'}, 40)))))
		}
		require.NoError(t, s.Txn(ctx, ops...))
	}
	// Churn so the freelist is not empty.
	require.NoError(t, s.Txn(ctx, metastore.Delete("root/collection/0000")))
	require.NoError(t, s.Txn(ctx, metastore.Put("root/collection/0000", []byte("again"))))
	kvs, err := s.Scan(ctx, "")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return kvs
}

// flipAll flips bit in every occurrence of needle in the file and returns the
// damaged image.
func flipAll(t *testing.T, data, needle []byte, at int, bit byte) []byte {
	t.Helper()
	out := bytes.Clone(data)
	n := 0
	for i := 0; ; {
		j := bytes.Index(out[i:], needle)
		if j < 0 {
			break
		}
		out[i+j+at] ^= bit
		i += j + len(needle)
		n++
	}
	require.Positive(t, n, "needle %q not in the file", needle)
	return out
}

// requireCorrupt checks that opening the file fails with a CorruptError
// naming it, and that the file is unchanged.
func requireCorrupt(t *testing.T, path string, want func(d embedded.Damage) bool) {
	t.Helper()
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	s, err := embedded.Open(path, nil)
	if err == nil {
		require.NoError(t, s.Close())
	}
	require.ErrorIs(t, err, metastore.ErrCorrupt)
	var ce *embedded.CorruptError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, path, ce.Path)
	require.Contains(t, err.Error(), path)
	found := false
	for _, d := range ce.Damage {
		found = found || want(d)
	}
	require.True(t, found, "damage not reported as expected: %v", err)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "a refused Open changed the file")

	damage, err := embedded.Verify(path)
	require.NoError(t, err)
	require.NotEmpty(t, damage)
}

func TestValueDamage(t *testing.T) {
	tests := []struct {
		name   string
		needle string // bytes to find; the flip is at offset at
		at     int
		bit    byte
		key    string
	}{
		{name: "value byte", needle: "value-0042-", at: 7, bit: 0x01, key: "root/collection/0042"},
		{name: "value high bit", needle: "value-0007-", at: 0, bit: 0x80, key: "root/collection/0007"},
		// The last key, flipped to a key that still sorts last.
		{name: "key byte", needle: "root/collection/0099", at: 19, bit: 0x40, key: "root/collection/009y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "meta.db")
			fill(t, path, 100)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, flipAll(t, data, []byte(tc.needle), tc.at, tc.bit), 0o600))
			requireCorrupt(t, path, func(d embedded.Damage) bool {
				return d.Key == tc.key && d.Bucket == "kv" && bytes.Contains([]byte(d.Problem), []byte("checksum mismatch"))
			})
		})
	}
}

func TestValueDamageNamesKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	fill(t, path, 100)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, flipAll(t, data, []byte("value-0042-"), 7, 0x04), 0o600))
	requireCorrupt(t, path, func(d embedded.Damage) bool {
		return d.Key == "root/collection/0042" && d.Page == -1 && bytes.Contains([]byte(d.Problem), []byte("checksum mismatch"))
	})
	damage, err := embedded.Verify(path)
	require.NoError(t, err)
	require.Len(t, damage, 1)
	require.Contains(t, damage[0].String(), `key "root/collection/0042": checksum mismatch`)
}

// boltLayout reads the page size and the current meta's freelist page with
// bbolt itself (on a copy, so the file under test is never opened by bbolt).
func boltLayout(t *testing.T, path string) (pageSize int, freelist uint64, hwm uint64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	le := binary.LittleEndian
	pageSize = int(le.Uint32(data[16+8:]))
	best := -1
	var txid uint64
	for i := 0; i < 2; i++ {
		m := data[i*pageSize+16:]
		if tx := le.Uint64(m[48:]); best < 0 || tx > txid {
			best, txid = i, tx
		}
	}
	m := data[best*pageSize+16:]
	return pageSize, le.Uint64(m[32:]), le.Uint64(m[40:])
}

func TestPageDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(data []byte, pageSize int, freelist, hwm uint64)
		want   string
	}{
		{name: "freelist page flags", damage: func(d []byte, ps int, fl, _ uint64) { d[int(fl)*ps+8] ^= 0x10 }, want: "freelist page has page flags"},
		{name: "freelist count", damage: func(d []byte, ps int, fl, _ uint64) { d[int(fl)*ps+10] ^= 0x01 }, want: "freelist"},
		{name: "freelist entry", damage: func(d []byte, ps int, fl, _ uint64) { d[int(fl)*ps+16] ^= 0x01 }, want: "page"},
		{name: "meta page 0", damage: func(d []byte, _ int, _, _ uint64) { d[16+40] ^= 0x01 }, want: "meta page checksum mismatch"},
		{name: "meta page 1", damage: func(d []byte, ps int, _, _ uint64) { d[ps+16+32] ^= 0x01 }, want: "meta page checksum mismatch"},
		{name: "both meta pages", damage: func(d []byte, ps int, _, _ uint64) { d[16] ^= 0x01; d[ps+16] ^= 0x01 }, want: "magic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "meta.db")
			fill(t, path, 200)
			ps, fl, hwm := boltLayout(t, path)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			tc.damage(data, ps, fl, hwm)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			requireCorrupt(t, path, func(d embedded.Damage) bool {
				return bytes.Contains([]byte(d.String()), []byte(tc.want))
			})
		})
	}
}

// TestEveryBitFlip flips one bit at every byte of the first 160 bytes of
// every page in use (headers, elements, the meta) and at every 23rd byte
// elsewhere, in turn. Open must never panic; it either refuses with a
// CorruptError, or the flip was somewhere bbolt never reads and the store
// holds exactly what was written.
func TestEveryBitFlip(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	want := fill(t, orig, 120)
	data, err := os.ReadFile(orig)
	require.NoError(t, err)
	ps, _, hwm := boltLayout(t, orig)
	end := min(len(data), int(hwm)*ps)
	path := filepath.Join(dir, "meta.db")
	refused, accepted := 0, 0
	for off := 0; off < end; off++ {
		if off%ps >= 160 && off%23 != 0 {
			continue
		}
		damaged := bytes.Clone(data)
		damaged[off] ^= 1 << (off % 8)
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		s, err := embedded.Open(path, nil)
		if err != nil {
			require.ErrorIs(t, err, metastore.ErrCorrupt, "offset %d", off)
			refused++
			continue
		}
		got, err := s.Scan(context.Background(), "")
		require.NoError(t, s.Close())
		require.NoError(t, err, "offset %d", off)
		require.Equal(t, want, got, "offset %d: a flip was accepted and changed the data", off)
		accepted++
	}
	t.Logf("%d flips refused, %d accepted with the data intact", refused, accepted)
	require.Positive(t, refused)
}

func TestTruncated(t *testing.T) {
	tests := []struct {
		name string
		size func(size, pageSize int, hwm uint64) int
	}{
		{name: "empty", size: func(int, int, uint64) int { return 0 }},
		{name: "inside meta page 0", size: func(int, int, uint64) int { return 40 }},
		{name: "meta pages only", size: func(_, ps int, _ uint64) int { return 2 * ps }},
		{name: "last page in use missing", size: func(_, ps int, hwm uint64) int { return (int(hwm) - 1) * ps }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "meta.db")
			fill(t, path, 50)
			info, err := os.Stat(path)
			require.NoError(t, err)
			ps, _, hwm := boltLayout(t, path)
			require.NoError(t, os.Truncate(path, int64(tc.size(int(info.Size()), ps, hwm))))
			requireCorrupt(t, path, func(d embedded.Damage) bool {
				return bytes.Contains([]byte(d.Problem), []byte("truncated")) || bytes.Contains([]byte(d.Problem), []byte("empty"))
			})
		})
	}
}

// writeLegacy writes a file as Strata did before values were checksummed:
// bucket "kv", values verbatim.
func writeLegacy(t *testing.T, path string, kvs map[string][]byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("kv"))
		if err != nil {
			return err
		}
		for k, v := range kvs {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
}

func TestLegacyUpgrade(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	legacy := map[string][]byte{
		"tso/idTimestamp": {0, 0, 1, 0x90, 0, 0, 0, 0},
		"root/db/default": []byte("default database"),
		"empty":           {},
	}
	writeLegacy(t, path, legacy)

	// Verify checks a legacy file without upgrading it.
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	damage, err := embedded.Verify(path)
	require.NoError(t, err)
	require.Empty(t, damage)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "Verify changed the file")

	// Open upgrades it and reads every value as it was.
	s, err := embedded.Open(path, nil)
	require.NoError(t, err)
	for k, v := range legacy {
		got, err := s.Get(context.Background(), k)
		require.NoError(t, err, k)
		require.Equal(t, v, got, k)
	}
	require.NoError(t, s.Close())

	// On disk every value now carries the envelope, and a format record exists.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("kv"))
		for k, v := range legacy {
			raw := b.Get([]byte(k))
			require.Len(t, raw, len(v)+5, k)
			require.Equal(t, byte(1), raw[0], k)
			require.Equal(t, v, raw[5:], k)
		}
		f := tx.Bucket([]byte("strata"))
		require.NotNil(t, f)
		require.NotNil(t, f.Get([]byte("format")))
		return nil
	}))
	require.NoError(t, db.Close())

	// The upgraded file is verified, reopens, and a flip in it is now caught.
	damage, err = embedded.Verify(path)
	require.NoError(t, err)
	require.Empty(t, damage)
	s = open(t, path)
	got, err := s.Get(context.Background(), "root/db/default")
	require.NoError(t, err)
	require.Equal(t, []byte("default database"), got)
}

func TestVerify(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "meta.db")
		fill(t, path, 300)
		damage, err := embedded.Verify(path)
		require.NoError(t, err)
		require.Empty(t, damage)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := embedded.Verify(filepath.Join(t.TempDir(), "meta.db"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("in use", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "meta.db")
		open(t, path)
		_, err := embedded.Verify(path)
		require.ErrorContains(t, err, "locked by another process")
	})
	t.Run("does not write a damaged file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "meta.db")
		fill(t, path, 100)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		damaged := flipAll(t, data, []byte("value-0099-"), 3, 0x10)
		require.NoError(t, os.WriteFile(path, damaged, 0o600))
		damage, err := embedded.Verify(path)
		require.NoError(t, err)
		require.Len(t, damage, 1)
		require.Equal(t, "root/collection/0099", damage[0].Key)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(damaged, after))
	})
}

// TestDamageWhileOpen damages a page under an open store: the bbolt panic
// comes back as a CorruptError, and the store refuses every later call.
func TestDamageWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	fill(t, path, 300)
	s := open(t, path)
	ctx := context.Background()
	_, err := s.Get(ctx, "root/collection/0150")
	require.NoError(t, err)

	// Turn every branch and leaf page into a freelist page, in place (bbolt
	// reads the file through a shared mapping).
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	ps, _, hwm := boltLayout(t, path)
	for id := 2; id < int(hwm); id++ {
		var flags [2]byte
		_, err := f.ReadAt(flags[:], int64(id*ps+8))
		require.NoError(t, err)
		if flags[0] == 0x01 || flags[0] == 0x02 {
			_, err = f.WriteAt([]byte{0x10}, int64(id*ps+8))
			require.NoError(t, err)
		}
	}
	require.NoError(t, f.Close())

	_, err = s.Scan(ctx, "root/")
	require.ErrorIs(t, err, metastore.ErrCorrupt)
	require.Contains(t, err.Error(), path)
	err2 := s.Txn(ctx, metastore.Put("root/new", []byte("x")))
	require.ErrorIs(t, err2, metastore.ErrCorrupt)
	var ce *embedded.CorruptError
	require.ErrorAs(t, err2, &ce)
	problems := s.Problems()
	require.Len(t, problems, 1)
	require.Equal(t, path, problems[0].Subject)
	require.True(t, problems[0].WritesUnavailable)
}

// TestValueDamageWhileOpen damages a value under an open store: reading it
// fails with a CorruptError naming the key, which Problems reports; other
// keys still read and write.
func TestValueDamageWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	fill(t, path, 50)
	s := open(t, path)
	ctx := context.Background()
	require.Empty(t, s.Problems())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("value-0021-"))
		if j < 0 {
			break
		}
		_, err := f.WriteAt([]byte{data[i+j+8] ^ 0x01}, int64(i+j+8))
		require.NoError(t, err)
		i += j + 1
	}
	require.NoError(t, f.Close())

	_, err = s.Get(ctx, "root/collection/0021")
	require.ErrorIs(t, err, metastore.ErrCorrupt)
	require.ErrorContains(t, err, `key "root/collection/0021": checksum mismatch`)
	_, err = s.Scan(ctx, "root/collection/002")
	require.ErrorIs(t, err, metastore.ErrCorrupt)
	err = s.Txn(ctx, metastore.IfEquals("root/collection/0021", []byte("x")), metastore.Put("other", []byte("y")))
	require.ErrorIs(t, err, metastore.ErrCorrupt)

	got, err := s.Get(ctx, "root/collection/0022")
	require.NoError(t, err)
	require.Contains(t, string(got), "value-0022-")
	require.NoError(t, s.Txn(ctx, metastore.Put("other", []byte("y"))))

	problems := s.Problems()
	require.Len(t, problems, 1)
	require.Contains(t, problems[0].Subject, `key "root/collection/0021"`)
	require.False(t, problems[0].WritesUnavailable)
}

// TestVerifyRandomHistory drives a store through random puts (small values
// and values spanning several pages), deletes and prefix deletes, and checks
// after every batch that the file verifies clean and reopens with the same
// content: the checks must never call a sound file damaged.
func TestVerifyRandomHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	model := map[string][]byte{}
	for round := 0; round < 30; round++ {
		s, err := embedded.Open(path, nil)
		require.NoError(t, err, "round %d", round)
		for txn := 0; txn < 20; txn++ {
			var ops []metastore.Op
			used := map[string]bool{}
			for i := 0; i < 1+rng.IntN(8); i++ {
				k := fmt.Sprintf("seg/%d/%04d", rng.IntN(4), rng.IntN(300))
				if used[k] {
					continue
				}
				used[k] = true
				switch r := rng.IntN(10); {
				case r < 6:
					size := rng.IntN(200)
					if rng.IntN(20) == 0 {
						size = 4096 + rng.IntN(20000) // overflow pages
					}
					v := make([]byte, size)
					for j := range v {
						v[j] = byte(rng.IntN(256))
					}
					ops = append(ops, metastore.Put(k, v))
					model[k] = v
				default:
					ops = append(ops, metastore.Delete(k))
					delete(model, k)
				}
			}
			if len(ops) > 0 {
				require.NoError(t, s.Txn(ctx, ops...))
			}
		}
		if round%7 == 6 {
			p := fmt.Sprintf("seg/%d/", rng.IntN(4))
			require.NoError(t, s.Txn(ctx, metastore.DeletePrefix(p)))
			for k := range model {
				if strings.HasPrefix(k, p) {
					delete(model, k)
				}
			}
		}
		require.NoError(t, s.Close())
		damage, err := embedded.Verify(path)
		require.NoError(t, err)
		require.Empty(t, damage, "round %d", round)
	}
	s := open(t, path)
	kvs, err := s.Scan(ctx, "")
	require.NoError(t, err)
	require.Len(t, kvs, len(model))
	for _, kv := range kvs {
		require.Equal(t, model[kv.Key], kv.Value, kv.Key)
	}
}

// TestMissingKVBucket removes the "kv" bucket from an upgraded file (with
// bbolt, so the file stays sound): the format record says it must exist.
func TestMissingKVBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	fill(t, path, 10)
	db, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("kv")) }))
	require.NoError(t, db.Close())
	requireCorrupt(t, path, func(d embedded.Damage) bool {
		return strings.Contains(d.Problem, `bucket "kv" is missing`)
	})
}
