package querynode_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/segment"
	"github.com/strata-db/strata/internal/stacktest"
)

// syncBuffer is a log sink safe for the components' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mappedFile returns the file whose mapping in this process holds addr
// ("" when addr is not in a file mapping), from /proc/self/maps.
func mappedFile(t *testing.T, addr unsafe.Pointer) string {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var lo, hi uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil {
			continue
		}
		if uintptr(addr) >= lo && uintptr(addr) < hi && len(fields) >= 6 {
			return fields[5]
		}
	}
	require.NoError(t, sc.Err())
	return ""
}

// mmapDir is where the stack's query node keeps its cache files.
func mmapDir(s *stacktest.Stack) string { return filepath.Join(s.Dir, "cache", "mmap") }

// setMmap sets (or, for "", deletes) the collection property mmap.enabled.
func setMmap(t *testing.T, s *stacktest.Stack, v string) {
	t.Helper()
	req := &milvuspb.AlterCollectionRequest{CollectionName: stacktest.Collection}
	if v == "" {
		req.DeleteKeys = []string{"mmap.enabled"}
	} else {
		req.Properties = []*commonpb.KeyValuePair{{Key: "mmap.enabled", Value: v}}
	}
	st, err := s.Proxy.AlterCollection(context.Background(), req)
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
}

// readAll runs a search (with the vectors as output) and a query of every
// row, returning what a client would compare.
func readAll(t *testing.T, s *stacktest.Stack) (hits []plan.Hit, outVecs []float32, queried []float32) {
	t.Helper()
	ctx := context.Background()
	res, err := s.QueryNode.Search(ctx, &plan.Search{
		Read:    plan.Read{CollectionID: s.CollectionID, Strong: true, OutputFields: []int64{vecField}},
		FieldID: vecField, Metric: "L2", Vectors: [][]float32{{17.5, 1}, {1234, 0}}, TopK: 20, Ef: 64,
	})
	require.NoError(t, err)
	for _, h := range res.Hits {
		hits = append(hits, h...)
	}
	outVecs = res.Fields[vecField].(*column.FloatVectors).Data
	q, err := s.Proxy.Query(ctx, &milvuspb.QueryRequest{
		CollectionName: stacktest.Collection, Expr: "id >= 0", OutputFields: []string{"vec"},
		QueryParams: []*commonpb.KeyValuePair{{Key: "limit", Value: "16384"}},
	})
	require.NoError(t, err)
	require.Zero(t, q.GetStatus().GetCode(), q.GetStatus().GetReason())
	for _, f := range q.GetFieldsData() {
		if f.GetFieldName() == "vec" {
			queried = f.GetVectors().GetFloatVector().GetData()
		}
	}
	return hits, outVecs, queried
}

// bits returns the bit patterns of v, for bit-identical comparisons.
func bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

// With mmap.enabled on the collection, the index (HNSW under L2, whose
// vectors are also the segment's column; HNSW under COSINE; IVF_FLAT) is
// served from a mapping of its cache file under {data-dir}/cache/mmap, and
// search and query return bit for bit what the same collection loaded
// into the heap returns. The row count is odd, so the HNSW arrays do not
// line up as the file is laid out and the cache copy is shifted.
func TestMmapIndexServesSameResults(t *testing.T) {
	const rows = 3001
	for _, tc := range []struct {
		name, indexType, metric string
		params                  []*commonpb.KeyValuePair
		sharedColumn            bool
	}{
		{name: "HNSW L2", indexType: "HNSW", metric: "L2", sharedColumn: true},
		{name: "HNSW COSINE", indexType: "HNSW", metric: "COSINE"},
		{name: "IVF_FLAT", indexType: "IVF_FLAT", metric: "L2", params: []*commonpb.KeyValuePair{{Key: "nlist", Value: "8"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stacktest.New(t)
			s.Insert(0, rows)
			s.Flush()
			buildIndex(t, s, tc.indexType, tc.metric, tc.params...)
			ctx := context.Background()

			require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
			heapHits, heapOut, heapQuery := readAll(t, s)
			require.Len(t, heapQuery, 2*rows)
			for _, seg := range querynode.SealedSegments(s.QueryNode, s.CollectionID) {
				vecs, attached := querynode.AttachedVectors(seg, vecField)
				require.True(t, attached)
				if vecs != nil {
					require.Empty(t, mappedFile(t, unsafe.Pointer(unsafe.SliceData(vecs))), "mmap off: the heap")
				}
			}
			s.QueryNode.Release(s.CollectionID)

			setMmap(t, s, "true")
			require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
			segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
			require.NotEmpty(t, segs)
			for _, seg := range segs {
				addr, attached := querynode.AttachedIndexData(seg, vecField)
				require.True(t, attached)
				file := mappedFile(t, addr)
				require.True(t, strings.HasPrefix(file, mmapDir(s)+"/"), "index data at %p is in %q, not the cache", addr, file)
				if tc.indexType == "HNSW" {
					stored, _ := querynode.AttachedVectors(seg, vecField)
					if stored != nil {
						require.Equal(t, file, mappedFile(t, unsafe.Pointer(unsafe.SliceData(stored))), "the HNSW vectors are in the mapping")
					}
				}
				if tc.sharedColumn {
					col := vectorsOf(t, seg)
					require.True(t, seg.SharesColumn(vecField))
					require.Equal(t, file, mappedFile(t, unsafe.Pointer(unsafe.SliceData(col.Data))), "the column is the mapped vectors")
					require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(col.Data)))%4, "aligned in memory")
				}
			}
			hits, out, queried := readAll(t, s)
			require.Equal(t, heapHits, hits)
			require.Equal(t, bits(heapOut), bits(out))
			require.Equal(t, bits(heapQuery), bits(queried))
		})
	}
}

// The node-wide default (queryNode.mmap.vectorIndex) maps an index unless
// the collection says otherwise; an index's own mmap.enabled wins over
// both.
func TestMmapSettingsPrecedence(t *testing.T) {
	cfg := querynode.Defaults()
	cfg.Mmap.VectorIndex = true
	s := stacktest.NewWith(t, stacktest.Options{QueryNode: cfg})
	s.Insert(0, 500)
	s.Flush()
	buildIndex(t, s, "HNSW", "L2")
	ctx := context.Background()
	mapped := func() bool {
		require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
		defer s.QueryNode.Release(s.CollectionID)
		segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
		require.NotEmpty(t, segs)
		addr, attached := querynode.AttachedIndexData(segs[0], vecField)
		require.True(t, attached)
		return mappedFile(t, addr) != ""
	}
	require.True(t, mapped(), "node default")
	setMmap(t, s, "false")
	require.False(t, mapped(), "collection property over the node default")
	st, err := s.Proxy.AlterIndex(ctx, &milvuspb.AlterIndexRequest{
		CollectionName: stacktest.Collection, IndexName: "vec",
		ExtraParams: []*commonpb.KeyValuePair{{Key: "mmap.enabled", Value: "true"}},
	})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	require.True(t, mapped(), "index parameter over the collection property")
}

// A damaged cache file is never trusted: the load finds its checksum
// wrong, writes it again from object storage, logs that, and serves the
// same results. Releasing the collection unmaps the files, but not while
// a read still holds a segment.
func TestMmapDamagedCacheAndRelease(t *testing.T) {
	const rows = 2000
	logs := &syncBuffer{}
	s := stacktest.NewWith(t, stacktest.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s.Insert(0, rows)
	s.Flush()
	buildIndex(t, s, "HNSW", "L2")
	setMmap(t, s, "true")
	ctx := context.Background()
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	wantHits, wantOut, wantQuery := readAll(t, s)
	s.QueryNode.Release(s.CollectionID)

	var files []string
	require.NoError(t, filepath.WalkDir(mmapDir(s), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		data[4096+(len(data)-4096)/3] ^= 0x10 // in the stored vectors
		require.NoError(t, os.WriteFile(f, data, 0o644))
	}
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	require.Contains(t, logs.String(), "mmap cache file damaged; rebuilt from object storage")
	hits, out, queried := readAll(t, s)
	require.Equal(t, wantHits, hits)
	require.Equal(t, bits(wantOut), bits(out))
	require.Equal(t, bits(wantQuery), bits(queried))

	segs, release := querynode.HoldSealed(s.QueryNode, s.CollectionID)
	require.NotEmpty(t, segs)
	addr, _ := querynode.AttachedIndexData(segs[0], vecField)
	file := mappedFile(t, addr)
	require.NotEmpty(t, file)
	s.QueryNode.Release(s.CollectionID)
	require.Equal(t, file, mappedFile(t, addr), "a held segment stays mapped after the release")
	stored, _ := querynode.AttachedVectors(segs[0], vecField)
	require.NotEmpty(t, stored)
	_ = stored[len(stored)-1] // still readable
	release()
	require.Empty(t, mappedFile(t, addr), "the last holder's release unmaps")
}

// With queryNode.mmap.vectorField and scalarField on (and no index), the
// raw columns (the primary key and the vectors, which FLAT search scans)
// are served from mapped column files under {data-dir}/cache/mmap/columns,
// with the same results as the heap; a field's own mmap.enabled=false
// keeps it on the heap; a damaged column file is rebuilt from the binlogs
// and logged.
func TestMmapColumns(t *testing.T) {
	const rows = 1001
	logs := &syncBuffer{}
	cfg := querynode.Defaults()
	cfg.Mmap.VectorField, cfg.Mmap.ScalarField = true, true
	s := stacktest.NewWith(t, stacktest.Options{QueryNode: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s.Insert(0, rows)
	s.Flush()
	ctx := context.Background()
	setMmap(t, s, "false") // the collection says no: the node default loses
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	wantHits, wantOut, wantQuery := readAll(t, s)
	for _, seg := range querynode.SealedSegments(s.QueryNode, s.CollectionID) {
		require.Empty(t, mappedFile(t, unsafe.Pointer(unsafe.SliceData(vectorsOf(t, seg).Data))))
	}
	s.QueryNode.Release(s.CollectionID)

	setMmap(t, s, "")
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	for _, seg := range querynode.SealedSegments(s.QueryNode, s.CollectionID) {
		file := mappedFile(t, unsafe.Pointer(unsafe.SliceData(vectorsOf(t, seg).Data)))
		require.True(t, strings.HasPrefix(file, filepath.Join(mmapDir(s), "columns")+"/"), "vectors in %q", file)
		require.NoError(t, seg.Read(func(v *segment.View) error {
			pk := v.Column(seg.PKField()).(*column.Ints)
			require.NotEmpty(t, mappedFile(t, unsafe.Pointer(unsafe.SliceData(pk.Data))), "the key column is mapped")
			return nil
		}))
	}
	hits, out, queried := readAll(t, s)
	require.Equal(t, wantHits, hits)
	require.Equal(t, bits(wantOut), bits(out))
	require.Equal(t, bits(wantQuery), bits(queried))
	s.QueryNode.Release(s.CollectionID)

	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(mmapDir(s), "columns"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, 2, "the key and the vectors of one segment")
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		data[len(data)-10] ^= 0x01
		require.NoError(t, os.WriteFile(f, data, 0o644))
	}
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	require.Equal(t, 2, strings.Count(logs.String(), "mmap cache file damaged; rebuilt from object storage"))
	hits, out, queried = readAll(t, s)
	require.Equal(t, wantHits, hits)
	require.Equal(t, bits(wantOut), bits(out))
	require.Equal(t, bits(wantQuery), bits(queried))
}
