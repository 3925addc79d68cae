package rootcoord

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore"
)

// onPChannels is a core (of newEnv) configured with pchannels DML pchannels.
func onPChannels(t *testing.T, pchannels int) (*env, *Core) {
	t.Helper()
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.PChannels = pchannels
	return e, e.core(t, cfg)
}

// TestShardsBeyondPChannels: a collection gets at most a shard per
// pchannel; more is refused with Milvus's error and records nothing.
func TestShardsBeyondPChannels(t *testing.T) {
	e, c := onPChannels(t, 2)
	ctx := context.Background()

	err := c.CreateCollection(ctx, "", schemaNamed("four", "4"), 4, 0, nil)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.EqualError(t, err, "shard num (4) exceeds max configuration (2)")
	_, err = c.Collection("", "four")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err))
	kvs, err := e.kv.Scan(ctx, catalog.CollectionPrefix)
	require.NoError(t, err)
	require.Empty(t, kvs, "nothing recorded")

	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("two", "4"), 2, 0, nil))
	col, err := c.Collection("", "two")
	require.NoError(t, err)
	require.Equal(t, 2, col.Shards)
	require.Len(t, col.VChannels, 2)
	require.ElementsMatch(t, []string{"by-dev-rootcoord-dml_0", "by-dev-rootcoord-dml_1"}, col.PChannels)
}

// TestLoadMoreShardsThanVChannels: a collection recorded before more shards
// than pchannels were refused (4 shards, 2 vchannels) is loaded with a
// shard per vchannel, which is what rows are routed to.
func TestLoadMoreShardsThanVChannels(t *testing.T) {
	e, c := onPChannels(t, 2)
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("old", "4"), 2, 0, nil))
	col, err := c.Collection("", "old")
	require.NoError(t, err)

	key := catalog.CollectionKey(col.ID)
	raw, err := e.kv.Get(ctx, key)
	require.NoError(t, err)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Contains(t, rec, "shards")
	rec["shards"] = 4
	raw, err = json.Marshal(rec)
	require.NoError(t, err)
	require.NoError(t, e.kv.Txn(ctx, metastore.Put(key, raw)))

	again, err := e.core(t, c.cfg).Collection("", "old")
	require.NoError(t, err)
	require.Equal(t, 2, again.Shards)
	require.Equal(t, col.VChannels, again.VChannels)
}
