package rootcoord_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/wal"
)

// counter allocates increasing IDs and timestamps.
type counter struct{ n atomic.Uint64 }

func (c *counter) Allocate(_ context.Context, n uint32) (uint64, error) {
	return c.n.Add(uint64(n)) - uint64(n) + 1, nil
}

// announcer accepts DDL messages without a WAL, counting them per pchannel
// as their offsets.
type announcer struct {
	ts  counter
	mu  sync.Mutex
	end map[string]int64
}

func (a *announcer) Append(ctx context.Context, batch map[string][]wal.Message) (uint64, error) {
	a.mu.Lock()
	if a.end == nil {
		a.end = map[string]int64{}
	}
	for p, ms := range batch {
		a.end[p] += int64(len(ms))
	}
	a.mu.Unlock()
	return a.ts.Allocate(ctx, 1)
}
func (a *announcer) Watch(string) {}
func (a *announcer) End(_ context.Context, p string) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.end[p], nil
}

func open(t *testing.T, path string, ids *counter) (*rootcoord.Core, func()) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	kv, err := embedded.Open(path, logger)
	require.NoError(t, err)
	core, err := rootcoord.New(context.Background(), rootcoord.Defaults(), kv, ids, ids, &announcer{}, logger)
	require.NoError(t, err)
	return core, func() { require.NoError(t, kv.Close()) }
}

func schema(name string) *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}}
}

func TestDatabasesAndAliasesPersist(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	ids := &counter{}
	core, closeKV := open(t, path, ids)

	names := func() []string {
		var out []string
		dbs, err := core.Databases(context.Background())
		require.NoError(t, err)
		for _, db := range dbs {
			out = append(out, db.Name)
		}
		return out
	}
	require.Equal(t, []string{"default"}, names())
	err := core.CreateCollection(ctx, "nodb", schema("c"), 1, commonpb.ConsistencyLevel_Bounded, nil)
	require.Equal(t, errcode.DatabaseNotFound, errcode.CodeOf(err))
	require.NoError(t, core.CreateDatabase(ctx, "db1", map[string]string{"k": "v"}))
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(core.CreateDatabase(ctx, "db1", nil)))
	require.NoError(t, core.CreateCollection(ctx, "db1", schema("c"), 1, commonpb.ConsistencyLevel_Bounded, nil))
	require.NoError(t, core.CreateAlias(ctx, "db1", "a", "c"))
	require.NoError(t, core.CreateAlias(ctx, "db1", "a", "c"), "same target: idempotent")
	require.Error(t, core.CreateAlias(ctx, "db1", "c", "c"), "clashes with a collection")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(core.CreateAlias(ctx, "db1", "b", "missing")))
	_, err = core.Collection("default", "a")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err), "aliases are per database")
	_, err = core.Collection("nodb", "a")
	require.Equal(t, errcode.DatabaseNotFound, errcode.CodeOf(err))
	require.Error(t, core.DropDatabase(ctx, "db1"), "not empty")
	require.Error(t, core.DropDatabase(ctx, "default"))
	require.NoError(t, core.DropDatabase(ctx, "never-was"))
	closeKV()

	core, closeKV = open(t, path, ids)
	defer closeKV()
	require.Equal(t, []string{"db1", "default"}, names())
	db, err := core.Database("db1")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k": "v"}, db.Properties)
	col, err := core.Collection("db1", "a")
	require.NoError(t, err)
	require.Equal(t, "c", col.Name)
	aliases, err := core.AliasesOf(context.Background(), col.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, aliases)
	_, err = core.DropCollection(ctx, "db1", "a")
	require.Error(t, err, "dropping through an alias")
	_, err = core.DropCollection(ctx, "db1", "c")
	require.Error(t, err, "the collection has aliases")
	require.NoError(t, core.DropAlias(ctx, "db1", "a"))
	require.NoError(t, core.DropAlias(ctx, "db1", "a"), "dropping a missing alias succeeds")
	_, err = core.DropCollection(ctx, "db1", "c")
	require.NoError(t, err)
	require.NoError(t, core.DropDatabase(ctx, "db1"))
	require.Equal(t, []string{"default"}, names())
}

func TestRenameCollectionPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	ids := &counter{}
	core, closeKV := open(t, path, ids)
	require.NoError(t, core.CreateDatabase(ctx, "db2", nil))
	for _, n := range []string{"a", "b"} {
		require.NoError(t, core.CreateCollection(ctx, "", schema(n), 1, commonpb.ConsistencyLevel_Bounded, nil))
	}
	require.NoError(t, core.CreateAlias(ctx, "", "al", "a"))
	require.Error(t, core.RenameCollection(ctx, "", "a", "", "b"), "the new name is taken")
	require.Error(t, core.RenameCollection(ctx, "", "a", "", "al"), "the new name is an alias")
	require.Error(t, core.RenameCollection(ctx, "", "a", "db2", "a"), "aliases cannot move to another database")
	require.NoError(t, core.RenameCollection(ctx, "", "a", "", "a2"))
	col, err := core.Collection("", "al")
	require.NoError(t, err)
	require.Equal(t, "a2", col.Name)
	require.Equal(t, "a2", col.Schema.GetName())
	require.NoError(t, core.RenameCollection(ctx, "default", "b", "db2", "b2"))
	closeKV()

	core, closeKV = open(t, path, ids)
	defer closeKV()
	_, err = core.Collection("", "a")
	require.Error(t, err)
	_, err = core.Collection("", "a2")
	require.NoError(t, err)
	_, err = core.Collection("", "b")
	require.Error(t, err)
	col, err = core.Collection("db2", "b2")
	require.NoError(t, err)
	require.Equal(t, "db2", col.DBName)
}

// A collection's vchannels start at their pchannels' ends when it is
// created, and the start offsets survive a restart.
func TestCollectionStartOffsets(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	ids := &counter{}
	logger := slog.New(slog.DiscardHandler)
	kv, err := embedded.Open(path, logger)
	require.NoError(t, err)
	ann := &announcer{}
	core, err := rootcoord.New(ctx, rootcoord.Defaults(), kv, ids, ids, ann, logger)
	require.NoError(t, err)
	require.NoError(t, core.CreateCollection(ctx, "", schema("a"), 16, commonpb.ConsistencyLevel_Bounded, nil))
	require.NoError(t, core.CreateCollection(ctx, "", schema("b"), 16, commonpb.ConsistencyLevel_Bounded, nil))
	b, err := core.Collection("", "b")
	require.NoError(t, err)
	require.Len(t, b.StartOffsets, 16)
	for i, v := range b.VChannels {
		// "a" announced one message on every pchannel before "b" was created.
		require.EqualValues(t, 1, b.StartOffsets[i], v)
		off, ok := core.StartOffset(v)
		require.True(t, ok)
		require.EqualValues(t, 1, off)
	}
	require.NoError(t, kv.Close())
	kv, err = embedded.Open(path, logger)
	require.NoError(t, err)
	defer func() { require.NoError(t, kv.Close()) }()
	core, err = rootcoord.New(ctx, rootcoord.Defaults(), kv, ids, ids, &announcer{}, logger)
	require.NoError(t, err)
	off, ok := core.StartOffset(b.VChannels[3])
	require.True(t, ok)
	require.EqualValues(t, 1, off)
	_, ok = core.StartOffset("by-dev-rootcoord-dml_0_1v0")
	require.False(t, ok, "unknown vchannel")
}

// New collections go to the least used pchannels: sixteen one-shard
// collections take every pchannel once, whatever their IDs.
func TestShardsSpreadOverPChannels(t *testing.T) {
	ctx := context.Background()
	ids := &counter{}
	core, closeKV := open(t, filepath.Join(t.TempDir(), "meta.db"), ids)
	defer closeKV()
	seen := map[string]int{}
	for i := 0; i < 16; i++ {
		name := fmt.Sprintf("c%d", i)
		require.NoError(t, core.CreateCollection(ctx, "", schema(name), 1, commonpb.ConsistencyLevel_Bounded, nil))
		col, err := core.Collection("", name)
		require.NoError(t, err)
		seen[col.PChannels[0]]++
	}
	require.Len(t, seen, 16, "%v", seen)
	require.NoError(t, core.CreateCollection(ctx, "", schema("wide"), 4, commonpb.ConsistencyLevel_Bounded, nil))
	col, err := core.Collection("", "wide")
	require.NoError(t, err)
	distinct := map[string]bool{}
	for _, p := range col.PChannels {
		distinct[p] = true
	}
	require.Len(t, distinct, 4, "the shards of one collection are on distinct pchannels")
}

// Alias conflicts get Milvus 2.6's codes and messages: 1601 for an alias
// named like a collection (and a collection named like an alias), 1602 for
// an alias that points to another collection, 1600 for a missing alias.
func TestAliasErrors(t *testing.T) {
	ctx := context.Background()
	ids := &counter{}
	core, closeKV := open(t, filepath.Join(t.TempDir(), "meta.db"), ids)
	defer closeKV()
	for _, n := range []string{"c1", "c2"} {
		require.NoError(t, core.CreateCollection(ctx, "", schema(n), 1, commonpb.ConsistencyLevel_Bounded, nil))
	}
	require.NoError(t, core.CreateAlias(ctx, "", "al", "c1"))
	for _, tc := range []struct {
		name string
		err  error
		code int32
		msg  string
	}{
		{
			"create alias named like a collection", core.CreateAlias(ctx, "", "c1", "c1"), errcode.AliasNameConflict,
			"alias and collection name conflict[database=default][alias=c1]",
		},
		{
			"create alias taken by another collection", core.CreateAlias(ctx, "", "al", "c2"), errcode.AliasAlreadyExists,
			"al is alias to another collection: c1: alias already exist[database=default][alias=al]",
		},
		{
			"alter alias named like a collection", core.AlterAlias(ctx, "", "c2", "c1"), errcode.AliasNameConflict,
			"alias and collection name conflict[database=default][alias=c2]",
		},
		{
			"alter a missing alias", core.AlterAlias(ctx, "", "nope", "c1"), errcode.AliasNotFound,
			"alias not found[database=default][alias=nope]",
		},
		{
			"create a collection named like an alias",
			core.CreateCollection(ctx, "", schema("al"), 1, commonpb.ConsistencyLevel_Bounded, nil), errcode.AliasNameConflict,
			"collection name [al] conflicts with an existing alias, please choose a unique name",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			require.Equal(t, tc.code, errcode.CodeOf(tc.err))
			require.Contains(t, tc.err.Error(), tc.msg)
		})
	}
}
