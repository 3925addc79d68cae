package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestSearchParamChecks pins Milvus's answers to two search parameters: a
// negative offset, and hints other than "iterative_filter".
func TestSearchParamChecks(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("p", 2)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("p").WithFloatVectorColumn("vector", 2, [][]float32{{1, 0}}))
	require.NoError(t, err)
	search := func(key, value string) error {
		_, err := c.Search(ctx, milvusclient.NewSearchOption("p", 3, []entity.Vector{entity.FloatVector{1, 0}}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam(key, value))
		return err
	}
	require.ErrorContains(t, search("offset", "-1"), "offset [-1] is invalid, it should be in range [1, 16384]")
	require.ErrorContains(t, search("hints", "nope"), "hints: nope not supported")
	require.NoError(t, search("hints", "iterative_filter"))
}
