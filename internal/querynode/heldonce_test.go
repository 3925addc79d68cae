package querynode_test

import (
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/segment"
	"github.com/strata-db/strata/internal/stacktest"
)

// vecField is the field ID of stacktest's "vec" (the first user field is
// 100, the primary key).
const vecField = 101

// buildIndex creates an index on the stack's "vec" and runs an index
// builder until every flushed segment has its file.
func buildIndex(t *testing.T, s *stacktest.Stack, indexType, metric string, extra ...*commonpb.KeyValuePair) {
	t.Helper()
	params := append([]*commonpb.KeyValuePair{{Key: "index_type", Value: indexType}, {Key: "metric_type", Value: metric}}, extra...)
	st, err := s.Proxy.CreateIndex(context.Background(), &milvuspb.CreateIndexRequest{
		CollectionName: stacktest.Collection, FieldName: "vec", IndexName: "vec", ExtraParams: params,
	})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	dn := s.NewDataNode()
	wg.Go(func() { _ = dn.RunIndexBuilder(ctx, s.Data, "test") })
	defer func() { cancel(); wg.Wait() }()
	require.Eventually(t, func() bool {
		for _, seg := range s.Data.Segments(s.CollectionID) {
			if seg.State != catalog.SegmentFlushed || seg.NumRows == 0 {
				continue
			}
			built := false
			tasks, err := s.Data.SegmentIndexes(context.Background(), seg.ID)
			require.NoError(t, err)
			for _, task := range tasks {
				built = built || len(task.Files) > 0
			}
			if !built {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond)
}

// vectorsOf returns the vector column a sealed segment serves.
func vectorsOf(t *testing.T, seg *segment.Segment) *column.FloatVectors {
	t.Helper()
	var c *column.FloatVectors
	require.NoError(t, seg.Read(func(v *segment.View) error {
		c, _ = v.Column(vecField).(*column.FloatVectors)
		return nil
	}))
	require.NotNil(t, c)
	return c
}

// checkServed checks that every row's vector, as a query returns it, is
// the one inserted: stacktest writes [key, 1].
func checkServed(t *testing.T, s *stacktest.Stack, rows int) {
	t.Helper()
	res, err := s.Proxy.Query(context.Background(), &milvuspb.QueryRequest{
		CollectionName: stacktest.Collection, Expr: "id >= 0", OutputFields: []string{"id", "vec"},
		QueryParams: []*commonpb.KeyValuePair{{Key: "limit", Value: "16384"}},
	})
	require.NoError(t, err)
	require.Zero(t, res.GetStatus().GetCode(), res.GetStatus().GetReason())
	var ids []int64
	var vecs []float32
	for _, f := range res.GetFieldsData() {
		switch f.GetFieldName() {
		case "id":
			ids = f.GetScalars().GetLongData().GetData()
		case "vec":
			vecs = f.GetVectors().GetFloatVector().GetData()
		}
	}
	require.Len(t, ids, rows)
	require.Len(t, vecs, 2*rows)
	for i, id := range ids {
		require.Equal(t, math.Float32bits(float32(id)), math.Float32bits(vecs[2*i]), "row %d", id)
		require.Equal(t, math.Float32bits(1), math.Float32bits(vecs[2*i+1]), "row %d", id)
	}
}

// A loaded sealed segment whose index stores the raw vectors (HNSW under
// L2 and IP) holds no vector column of its own: its column is the index's
// vectors, the same memory, and MemoryBytes does not count it. Indexes
// that keep the vectors otherwise (HNSW under COSINE normalises them,
// IVF_FLAT groups them by list, IVF_SQ8 quantises them) leave the decoded
// column in place. Either way reads return the inserted vectors bit for
// bit.
func TestSealedVectorsHeldOnce(t *testing.T) {
	const rows = 3000
	ivfParams := []*commonpb.KeyValuePair{{Key: "nlist", Value: "8"}}
	for _, tc := range []struct {
		name, indexType, metric string
		params                  []*commonpb.KeyValuePair
		shared                  bool
	}{
		{name: "HNSW L2", indexType: "HNSW", metric: "L2", shared: true},
		{name: "HNSW IP", indexType: "HNSW", metric: "IP", shared: true},
		{name: "HNSW COSINE", indexType: "HNSW", metric: "COSINE"},
		{name: "IVF_FLAT", indexType: "IVF_FLAT", metric: "L2", params: ivfParams},
		{name: "IVF_SQ8", indexType: "IVF_SQ8", metric: "L2", params: ivfParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stacktest.New(t)
			s.Insert(0, rows)
			s.Flush()
			buildIndex(t, s, tc.indexType, tc.metric, tc.params...)
			require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
			segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
			require.NotEmpty(t, segs)
			for _, seg := range segs {
				stored, attached := querynode.AttachedVectors(seg, vecField)
				require.True(t, attached, "segment %d has no index attached", seg.ID)
				col := vectorsOf(t, seg)
				require.Equal(t, tc.shared, seg.SharesColumn(vecField))
				n := int64(seg.Len())
				own := n*(8+8+8+4) + int64(4*len(col.Data)) // key, insert and delete ts, key order, vectors
				if tc.shared {
					require.Equal(t, unsafe.SliceData(stored), unsafe.SliceData(col.Data), "the column is not the index's vectors")
					own -= int64(4 * len(col.Data))
				}
				require.Equal(t, own, seg.MemoryBytes())
			}
			checkServed(t, s, rows)
		})
	}
}

// An index that finishes after its segment loaded frees the decoded
// column too: once attached, the segment reads the index's vectors.
func TestSealedVectorsSharedOnLateAttach(t *testing.T) {
	const rows = 2000
	s := stacktest.New(t)
	s.Insert(0, rows)
	s.Flush()
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
	require.NotEmpty(t, segs)
	for _, seg := range segs {
		require.False(t, seg.SharesColumn(vecField))
	}
	buildIndex(t, s, "HNSW", "L2")
	require.Eventually(t, func() bool {
		for _, seg := range segs {
			if !seg.SharesColumn(vecField) {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond)
	for _, seg := range segs {
		stored, _ := querynode.AttachedVectors(seg, vecField)
		require.Equal(t, unsafe.SliceData(stored), unsafe.SliceData(vectorsOf(t, seg).Data))
	}
	checkServed(t, s, rows)
}

// A damaged index file fails only its own attach: the segment loads its
// vectors from the binlogs, holds them itself and is searched exactly.
func TestSealedVectorsDamagedIndexFile(t *testing.T) {
	const rows = 1000
	s := stacktest.New(t)
	s.Insert(0, rows)
	s.Flush()
	buildIndex(t, s, "HNSW", "L2")
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(s.Dir, "storage", "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		data[len(data)/3] ^= 0x10 // in the stored vectors
		require.NoError(t, os.WriteFile(f, data, 0o644))
	}
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
	require.NotEmpty(t, segs)
	for _, seg := range segs {
		_, attached := querynode.AttachedVectors(seg, vecField)
		require.False(t, attached)
		require.False(t, seg.SharesColumn(vecField))
		require.Len(t, vectorsOf(t, seg).Data, 2*seg.Len())
	}
	checkServed(t, s, rows)
}
