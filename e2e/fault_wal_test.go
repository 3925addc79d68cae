//go:build fault

package e2e

import (
	"bytes"
	"context"
	binenc "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/health"
)

// Fault tests of the WAL (issue 17, items 3 and 6): the built binary writes
// a real data dir, which is then damaged (a flipped bit) or starved (a full
// file system), and the server is checked for availability, what it keeps
// and what it reports.

const walFaultDim = 4

// walFaultCreate creates (and loads) a collection with the given number of
// shards and returns the pchannels it lives on.
func walFaultCreate(ctx context.Context, t *testing.T, c *milvusclient.Client, name string, shards int32) []string {
	t.Helper()
	schema := entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(walFaultDim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, schema).WithShardNum(shards)))
	indexAndLoad(ctx, t, c, name, entity.L2)
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(name))
	require.NoError(t, err)
	require.Len(t, desc.PhysicalChannels, int(shards))
	return desc.PhysicalChannels
}

// walFaultInsert inserts rows with the given primary keys.
func walFaultInsert(ctx context.Context, c *milvusclient.Client, name string, ids []int64) error {
	vecs := make([][]float32, len(ids))
	for i, id := range ids {
		vecs[i] = []float32{float32(id), 1, 2, 3}
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := c.Insert(ictx, milvusclient.NewColumnBasedInsertOption(name).
		WithInt64Column("id", ids).WithFloatVectorColumn("vec", walFaultDim, vecs))
	return err
}

// walFaultCount returns count(*) of a collection read with Strong consistency.
func walFaultCount(ctx context.Context, c *milvusclient.Client, name string) (int64, error) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rs, err := c.Query(qctx, milvusclient.NewQueryOption(name).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, err
	}
	col := rs.GetColumn("count(*)")
	if col == nil || col.Len() != 1 {
		return 0, fmt.Errorf("count(*): unexpected result %v", rs)
	}
	return col.GetAsInt64(0)
}

// walProblems returns the problems /healthz/detail lists for the WAL.
func walProblems(t *testing.T, p *proc) []health.Problem {
	t.Helper()
	_, _, all := healthDetail(t, p)
	var out []health.Problem
	for _, pr := range all {
		if pr.Component == "wal" {
			out = append(out, pr)
		}
	}
	return out
}

// walNewestSegment returns the path of the newest segment file of pchannel.
func walNewestSegment(t *testing.T, dataDir, pchannel string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dataDir, "wal", pchannel, "*.wal"))
	require.NoError(t, err)
	require.NotEmpty(t, matches, "no WAL segment for %s", pchannel)
	sort.Strings(matches)
	return matches[len(matches)-1]
}

// walFrames returns the byte offset and data length of every frame of a
// segment file (length uint32 LE | crc uint32 LE | data; see
// internal/wal/local/doc.go).
func walFrames(b []byte) (starts, lengths []int) {
	for pos := 0; pos+8 <= len(b); {
		n := int(binenc.LittleEndian.Uint32(b[pos:]))
		if n == 0 || pos+8+n > len(b) {
			break
		}
		starts, lengths = append(starts, pos), append(lengths, n)
		pos += 8 + n
	}
	return starts, lengths
}

// TestFaultWALMidFileBitFlip flips one bit in a record in the middle of the
// newest WAL file of a collection's pchannel after a kill: the server must
// come up, keep the file byte-identical (no truncation of the acknowledged
// writes after it), name the file and offset in its log, refuse writes to
// that pchannel and keep serving writes on the others.
func TestFaultWALMidFileBitFlip(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p := startProc(t, bin, dir)
	c := p.client(t)
	// One collection on one pchannel, and one whose two shards sit on two
	// consecutive pchannels (rootcoord.CreateCollection), one of which is
	// not the first collection's: that one is damaged.
	otherCh := walFaultCreate(ctx, t, c, "walgood", 1)[0]
	chans := walFaultCreate(ctx, t, c, "walbad", 2)
	damagedCh := chans[0]
	if damagedCh == otherCh {
		damagedCh = chans[1]
	}
	require.NotEqual(t, otherCh, damagedCh)
	for i := range 8 {
		ids := []int64{int64(10 * i), int64(10*i + 1), int64(10*i + 2), int64(10*i + 3)}
		require.NoError(t, walFaultInsert(ctx, c, "walbad", ids), "insert %d", i)
	}
	require.NoError(t, walFaultInsert(ctx, c, "walgood", []int64{1, 2, 3}))
	p.kill(t)

	seg := walNewestSegment(t, dir, damagedCh)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	starts, lengths := walFrames(b)
	require.GreaterOrEqual(t, len(starts), 6, "the segment holds the collection's records")
	require.Equal(t, len(b), starts[len(starts)-1]+8+lengths[len(lengths)-1], "the segment is clean before the flip")
	mid := len(starts) / 2
	at := starts[mid]
	b[at+8+lengths[mid]/2] ^= 0x10
	require.NoError(t, os.WriteFile(seg, b, 0o644))

	p = startProc(t, bin, dir) // fails the test unless /healthz turns 200
	c = p.client(t)
	after, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b, after), "the damaged WAL file is kept byte-identical")
	require.Eventually(t, func() bool {
		log := p.stderr.String()
		return strings.Contains(log, seg) && strings.Contains(log, fmt.Sprintf("byte_offset=%d", at))
	}, 10*time.Second, 100*time.Millisecond, "the server log names the file and offset; log:\n%s", p.stderr.String())

	probs := walProblems(t, p)
	require.Len(t, probs, 1, "/healthz/detail reports the damaged pchannel")
	require.Equal(t, "pchannel "+damagedCh, probs[0].Subject)
	require.True(t, probs[0].WritesUnavailable)
	require.Contains(t, probs[0].Reason, seg)

	// The other pchannel still takes writes.
	require.NoError(t, walFaultInsert(ctx, c, "walgood", []int64{4, 5}))
	// The damaged one refuses them (rows of every key hash to both shards).
	err = walFaultInsert(ctx, c, "walbad", []int64{1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007})
	require.Error(t, err)
	require.Contains(t, err.Error(), "damaged")
	after, err = os.ReadFile(seg)
	require.NoError(t, err)
	require.True(t, bytes.Equal(b, after), "still byte-identical after a refused insert")
	t.Logf("damaged %s at byte %d (record %d of %d); other pchannel %s", seg, at, mid, len(starts), otherCh)
}

// walFaultMount mounts a tmpfs of size bytes on a new temp dir (skipping
// where that is not permitted) and unmounts it when the test ends.
func walFaultMount(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFaultWALFullDisk runs the server with its data dir on a small tmpfs,
// fills it, and checks that inserts fail while it is full and succeed again
// once space is freed, without a restart, with Strong queries answering
// again and seeing exactly the acknowledged rows.
func TestFaultWALFullDisk(t *testing.T) {
	bin := buildBinary(t)
	mnt := walFaultMount(t, 64<<20)
	dir := filepath.Join(mnt, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p := startProc(t, bin, dir)
	t.Cleanup(func() { p.kill(t) }) // before the unmount
	c := p.client(t)
	walFaultCreate(ctx, t, c, "full", 1)
	acked := int64(0)
	next := int64(0)
	insert := func() error {
		ids := []int64{next, next + 1}
		next += 2
		err := walFaultInsert(ctx, c, "full", ids)
		if err == nil {
			acked += 2
		}
		return err
	}
	for range 5 {
		require.NoError(t, insert())
	}
	n, err := walFaultCount(ctx, c, "full")
	require.NoError(t, err)
	require.Equal(t, acked, n)

	ballast := filepath.Join(mnt, "ballast")
	f, err := os.Create(ballast)
	require.NoError(t, err)
	chunk := make([]byte, 1<<16)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			break
		}
	}
	require.NoError(t, f.Close())
	var failure error
	for range 100 { // the last page of the WAL file may still take a few
		if failure = insert(); failure != nil {
			break
		}
	}
	require.Error(t, failure, "inserts fail while the disk is full")
	require.Contains(t, failure.Error(), "no space left on device")
	t.Logf("insert on a full disk: %v", failure)
	probs := walProblems(t, p)
	require.NotEmpty(t, probs, "/healthz/detail reports the WAL writes failing")
	for _, pr := range probs {
		require.True(t, pr.WritesUnavailable)
		require.Contains(t, pr.Reason, "no space left on device")
	}

	require.NoError(t, os.Remove(ballast))
	require.Eventually(t, func() bool { return insert() == nil }, 20*time.Second, 100*time.Millisecond,
		"inserts succeed again once space is freed, without a restart")
	for range 5 {
		require.NoError(t, insert())
	}
	var count int64
	require.Eventually(t, func() bool {
		count, err = walFaultCount(ctx, c, "full")
		return err == nil
	}, 20*time.Second, 100*time.Millisecond, "Strong queries answer again: %v", err)
	require.Equal(t, acked, count, "exactly the acknowledged rows")
	require.Eventually(t, func() bool { return len(walProblems(t, p)) == 0 }, 10*time.Second, 100*time.Millisecond,
		"the WAL problems clear once every pchannel writes again")
}
