//go:build fault

package e2e

import (
	"bytes"
	"context"
	binenc "encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// The meta fault test writes a data dir with the built binary (a collection,
// some rows, a clean stop), then damages meta.db in one place per case and
// starts the binary on it: the start must fail fast with a non-zero exit,
// say which file and what is damaged, show no panic or goroutine trace, and
// leave meta.db byte for byte as it was. Offsets are found from the file
// itself (bbolt's meta pages, the stored key bytes), not fixed.

const (
	faultMetaColl = "fault_meta_coll"
	faultMetaDim  = 4
	idWindowKey   = "tso/idTimestamp"
)

// faultMetaLayout is what the test reads of bbolt's layout: the page size
// and, from the newer meta page, the freelist and root pages.
type faultMetaLayout struct {
	pageSize       int
	freelist, root int
}

func readMetaLayout(t *testing.T, data []byte) faultMetaLayout {
	t.Helper()
	le := binenc.LittleEndian
	require.Greater(t, len(data), 16+64)
	ps := int(le.Uint32(data[16+8:])) // meta: magic, version, pageSize
	var best []byte
	var bestTx uint64
	for i := 0; i < 2; i++ {
		m := data[i*ps+16 : i*ps+16+64]
		require.Equal(t, uint32(0xED0CDAED), le.Uint32(m), "meta page %d", i)
		if tx := le.Uint64(m[48:]); best == nil || tx > bestTx {
			best, bestTx = m, tx
		}
	}
	return faultMetaLayout{pageSize: ps, root: int(le.Uint64(best[16:])), freelist: int(le.Uint64(best[32:]))}
}

// valueOffsets returns, for every copy of key in the file (the live entry and
// stale ones in freed pages), the offset of the stored value that bbolt lays
// out right after the key.
func valueOffsets(t *testing.T, data []byte, key string) []int {
	t.Helper()
	var out []int
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(key))
		if j < 0 {
			break
		}
		out = append(out, i+j+len(key))
		i += j + len(key)
	}
	require.NotEmpty(t, out, "key %q not found in meta.db", key)
	return out
}

// writeFaultMetaDir runs the binary once over a new data dir: create a
// collection, insert rows, load it, stop cleanly.
func writeFaultMetaDir(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	p := startProc(t, bin, dir)
	c := p.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	schema := entity.NewSchema().WithName(faultMetaColl).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(faultMetaDim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(faultMetaColl, schema)))
	ids := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	vecs := make([][]float32, len(ids))
	for i := range vecs {
		vecs[i] = []float32{float32(i), 1, 2, 3}
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(faultMetaColl).
		WithInt64Column("id", ids).WithFloatVectorColumn("vec", faultMetaDim, vecs))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, faultMetaColl, entity.L2)
	require.Equal(t, 0, p.term(t), "clean stop; stderr:\n%s", p.stderr.String())
	return dir
}

// copyOf copies the data dir src into a new temporary directory.
func copyOf(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	copyDir(t, src, dst)
	return dst
}

// runToExit starts the binary on dir and waits for it to exit; it fails the
// test if the binary is still running after limit (it should refuse at once).
func runToExit(t *testing.T, bin, dir string, limit time.Duration) (code int, output string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "standalone", "--addr", "127.0.0.1:0", "--metrics-addr", "",
		"--data-dir", dir, "--log-level", "warn")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the server did not exit on a damaged meta.db; output:\n%s", out)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, string(out)
}

func TestFaultMetaDamage(t *testing.T) {
	bin := buildBinary(t)
	golden := writeFaultMetaDir(t, bin)
	meta, err := os.ReadFile(filepath.Join(golden, "meta.db"))
	require.NoError(t, err)
	layout := readMetaLayout(t, meta)
	castagnoli := crc32.MakeTable(crc32.Castagnoli)

	tests := []struct {
		name   string
		damage func(t *testing.T, data []byte)
		want   []string // each must appear in the output
		// meta is true when the meta store itself refuses the file (its
		// message names meta.db), false for a value that only fails a
		// reader's sanity check (the message names the key).
		meta bool
	}{
		{
			// The high bit of the saved ID window (bit 62 of the bound; bit
			// 63 made it negative, which was already refused): the envelope
			// is version(1) crc(4) payload(8, big-endian).
			name: "ID window high bit",
			damage: func(t *testing.T, data []byte) {
				for _, off := range valueOffsets(t, data, idWindowKey) {
					data[off+5] ^= 0x40
				}
			},
			want: []string{`key "` + idWindowKey + `"`, "checksum mismatch"},
			meta: true,
		},
		{
			// A bit inside the collection's record (its schema holds the name).
			name: "collection record value",
			damage: func(t *testing.T, data []byte) {
				n := 0
				for i := 0; ; {
					j := bytes.Index(data[i:], []byte(faultMetaColl))
					if j < 0 {
						break
					}
					data[i+j+3] ^= 0x01
					i += j + len(faultMetaColl)
					n++
				}
				require.Positive(t, n)
			},
			want: []string{`bucket "kv": key "`, "checksum mismatch"},
			meta: true,
		},
		{
			// A window a year ahead with a valid checksum: the meta store
			// accepts it, the TSO sanity check must not.
			name: "ID window far ahead, checksum valid",
			damage: func(t *testing.T, data []byte) {
				payload := binenc.BigEndian.AppendUint64(nil, uint64(time.Now().Add(365*24*time.Hour).UnixMilli()))
				for _, off := range valueOffsets(t, data, idWindowKey) {
					copy(data[off+5:], payload)
					crc := crc32.Update(crc32.Checksum([]byte(idWindowKey), castagnoli), castagnoli, payload)
					binenc.BigEndian.PutUint32(data[off+1:], crc)
				}
			},
			want: []string{idWindowKey, "ahead of the clock"},
		},
		{
			// The freelist page's type (bbolt: "panic: invalid freelist page").
			name: "freelist page header",
			damage: func(t *testing.T, data []byte) {
				data[layout.freelist*layout.pageSize+8] ^= 0x10
			},
			want: []string{"freelist page has page flags"},
			meta: true,
		},
		{
			// An entry of the freelist.
			name: "freelist entry",
			damage: func(t *testing.T, data []byte) {
				count := binenc.LittleEndian.Uint16(data[layout.freelist*layout.pageSize+10:])
				require.Positive(t, count, "the freelist is empty")
				data[layout.freelist*layout.pageSize+16+1] ^= 0x01
			},
			want: []string{"page "},
			meta: true,
		},
		{
			// The element count of the root page.
			name: "root page header",
			damage: func(t *testing.T, data []byte) {
				data[layout.root*layout.pageSize+10] ^= 0x01
			},
			want: []string{"page "},
			meta: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyOf(t, golden)
			path := filepath.Join(dir, "meta.db")
			damaged := bytes.Clone(meta)
			tc.damage(t, damaged)
			require.NoError(t, os.WriteFile(path, damaged, 0o600))

			code, out := runToExit(t, bin, dir, 30*time.Second)
			require.NotZero(t, code, "the server started on a damaged meta.db; output:\n%s", out)
			if tc.meta {
				require.Contains(t, out, path, "the message names the file")
				require.Contains(t, out, "nothing was repaired or deleted")
			}
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
			require.NotContains(t, out, "panic:")
			require.NotContains(t, out, "goroutine ")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, bytes.Equal(damaged, after), "meta.db was changed by the refused start")
			t.Logf("refused as wanted: %s", strings.TrimSpace(out))
		})
	}

	// The undamaged dir still starts and serves the collection.
	t.Run("undamaged", func(t *testing.T) {
		p := startProc(t, bin, copyOf(t, golden))
		c := p.client(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption(faultMetaColl))
		require.NoError(t, err)
		require.True(t, has)
		require.Equal(t, 0, p.term(t))
	})
}
