package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestAlterMmapWhileLoaded pins Milvus's rule that a loaded collection's
// mmap.enabled and lazyload.enabled properties cannot change (set or
// deleted) until it is released.
func TestAlterMmapWhileLoaded(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("m", 2)))
	d, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("m"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"timezone": "UTC"}, d.Properties, "a new collection shows its zone, as in Milvus 2.6")
	alter := func() error {
		return c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption("m").WithProperty("mmap.enabled", true))
	}
	drop := func() error {
		return c.DropCollectionProperties(ctx, milvusclient.NewDropCollectionPropertiesOption("m", "mmap.enabled"))
	}
	require.ErrorContains(t, alter(), "can not alter mmap properties if collection loaded", "SimpleCreateCollectionOptions loads the collection")
	require.ErrorContains(t, drop(), "can not delete mmap properties if collection loaded")
	require.ErrorContains(t, c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption("m").
		WithProperty("lazyload.enabled", true)), "can not alter mmap properties if collection loaded")
	require.ErrorContains(t, c.DropCollectionProperties(ctx, milvusclient.NewDropCollectionPropertiesOption("m", "lazyload.enabled")),
		"can not delete lazyload.enabled properties if collection loaded")
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption("m")))
	require.NoError(t, alter())
	require.NoError(t, drop())
}
