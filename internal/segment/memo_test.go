package segment_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/segment"
)

// TestMemoBuildsOnceUnderReaders checks that concurrent readers holding the
// segment's read lock share one value per key, built once.
func TestMemoBuildsOnceUnderReaders(t *testing.T) {
	s, err := segment.New(segment.Info{ID: 1}, schema(schemapb.DataType_Int64))
	require.NoError(t, err)
	var builds atomic.Int32
	var wg sync.WaitGroup
	got := make([]any, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Read(func(v *segment.View) error {
				got[g] = v.Memo("k", func() any { builds.Add(1); return new(int) })
				return nil
			})
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), builds.Load())
	for _, v := range got {
		require.Same(t, got[0], v)
	}
	var other any
	require.NoError(t, s.Read(func(v *segment.View) error {
		other = v.Memo("other", func() any { return new(int) })
		return nil
	}))
	require.NotSame(t, got[0], other)
}
