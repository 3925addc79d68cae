package e2e

import (
	"strconv"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestSearchCollectionIDGuard pins the check pymilvus's iterators rely on:
// a search naming an alias with the "collection_id" the iterator started on
// fails once the alias points at another collection, with Milvus's "alias or
// database may have been changed".
func TestSearchCollectionIDGuard(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	for _, name := range []string{"first", "second"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions(name, 2)))
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(name, column.NewColumnFloatVector("vector", 2, [][]float32{{1, 0}, {0, 1}})))
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateAlias(ctx, milvusclient.NewCreateAliasOption("first", "cur")))
	first, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("first"))
	require.NoError(t, err)
	search := func() error {
		_, err := c.Search(ctx, milvusclient.NewSearchOption("cur", 2, []entity.Vector{entity.FloatVector{1, 0}}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("collection_id", strconv.FormatInt(first.ID, 10)))
		return err
	}
	require.NoError(t, search(), "the alias still names the collection the id came from")
	require.NoError(t, c.AlterAlias(ctx, milvusclient.NewAlterAliasOption("cur", "second")))
	require.ErrorContains(t, search(), "alias or database may have been changed")
}
