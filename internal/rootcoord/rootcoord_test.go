package rootcoord

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env holds the real dependencies of a Core in a temp dir.
type env struct {
	dir string
	kv  *embedded.Store
	log *wallocal.Log
	w   *wal.Writer
	ids *tso.Allocator
	ts  *tso.Allocator
}

func newEnv(t *testing.T, dir string) *env {
	t.Helper()
	ctx := context.Background()
	kv, err := embedded.Open(filepath.Join(dir, "meta.db"), nil)
	require.NoError(t, err)
	l, err := wallocal.Open(wallocal.Config{Dir: filepath.Join(dir, "wal")}, nil)
	require.NoError(t, err)
	e := &env{dir: dir, kv: kv, log: l}
	t.Cleanup(e.close(t))
	e.ids, err = tso.New(ctx, kv, tso.Config{Key: "tso/id"}, nil)
	require.NoError(t, err)
	e.ts, err = tso.New(ctx, kv, tso.Config{Key: "tso/ts"}, nil)
	require.NoError(t, err)
	e.w = wal.NewWriter(l, e.ts, wal.WriterConfig{}, nil)
	return e
}

func (e *env) close(t *testing.T) func() {
	return func() {
		if e.kv == nil {
			return
		}
		require.NoError(t, e.log.Close())
		require.NoError(t, e.kv.Close())
		e.kv = nil
	}
}

func (e *env) core(t *testing.T, cfg Config) *Core {
	t.Helper()
	c, err := New(context.Background(), cfg, e.kv, e.ids, e.ts, e.w, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return c
}

func (e *env) messages(t *testing.T, pchannel string) []wal.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	end, err := e.log.End(ctx, pchannel)
	require.NoError(t, err)
	s, err := wal.OpenScanner(ctx, e.log, pchannel, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	var out []wal.Entry
	for range end {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

func schemaNamed(name string, dim string) *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{pkField(), vecField(dim)}}
}

func TestCreateCollection(t *testing.T) {
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.PChannels = 4
	c := e.core(t, cfg)
	ctx := context.Background()

	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "4"), 2, commonpb.ConsistencyLevel_Bounded, map[string]string{"k": "v"}))
	col, err := c.Collection("default", "a")
	require.NoError(t, err)
	require.Equal(t, "default", col.DBName)
	require.Equal(t, 2, col.Shards)
	require.Len(t, col.VChannels, 2)
	require.Len(t, col.PChannels, 2)
	require.Equal(t, []string{"_default"}, []string{col.Partitions[0].Name})
	require.NotZero(t, col.CreatedTS)
	require.Equal(t, "v", col.Properties["k"])
	require.Len(t, col.Schema.GetFields(), 4, "id, vec, RowID, Timestamp")
	byID, err := c.CollectionByID(col.ID)
	require.NoError(t, err)
	require.Same(t, col, byID)
	for i, v := range col.VChannels {
		require.Equal(t, col.PChannels[i], wal.PChannelOf(v))
		id, err := wal.CollectionIDOf(v)
		require.NoError(t, err)
		require.Equal(t, col.ID, id)
		msgs := e.messages(t, col.PChannels[i])
		require.Len(t, msgs, 1)
		require.Equal(t, wal.TypeCreateCollection, msgs[0].Message.Type)
		require.Equal(t, v, msgs[0].Message.VChannel)
	}

	// Idempotent with the identical schema: nothing new is announced.
	require.NoError(t, c.CreateCollection(ctx, "default", schemaNamed("a", "4"), 2, commonpb.ConsistencyLevel_Bounded, nil))
	require.Len(t, e.messages(t, col.PChannels[0]), 1)
	require.Len(t, collections(t, c, ""), 1)
	// A different schema under the same name is refused.
	err = c.CreateCollection(ctx, "", schemaNamed("a", "8"), 2, commonpb.ConsistencyLevel_Bounded, nil)
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.ErrorContains(t, err, "duplicate collection")
	require.ErrorContains(t, err, "a")
	got, err := c.Collection("", "a")
	require.NoError(t, err)
	require.Equal(t, "4", got.Schema.GetFields()[1].GetTypeParams()[0].GetValue(), "the first schema stays")

	for _, tc := range []struct {
		name   string
		schema *schemapb.CollectionSchema
		shards int
		msg    string
	}{
		{"too many shards", schemaNamed("b", "4"), 17, "shard num"},
		{"bad schema", schemaNamed("b", "0"), 1, "dimension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CreateCollection(ctx, "", tc.schema, tc.shards, 0, nil)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
			_, err = c.Collection("", "b")
			require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err), "nothing was created")
		})
	}
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("b", "4"), 0, 0, nil))
	b, err := c.Collection("", "b")
	require.NoError(t, err)
	require.Equal(t, 1, b.Shards, "shards ≤ 0 means one")
	require.NotEqual(t, col.ID, b.ID)
	require.Equal(t, []string{"a", "b"}, names(collections(t, c, "default")))
	require.Empty(t, collections(t, c, "other"))
	require.ElementsMatch(t, append(append([]string(nil), col.VChannels...), b.VChannels...), c.LiveVChannels())

	_, err = c.Collection("", "missing")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err))
	require.ErrorContains(t, err, "missing")
	_, err = c.CollectionByID(12345)
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err))

	// Drop: announced, gone, and dropping again is fine.
	dropped, err := c.DropCollection(ctx, "", "a")
	require.NoError(t, err)
	require.Equal(t, col.ID, dropped.ID)
	msgs := e.messages(t, col.PChannels[0])
	require.Equal(t, wal.TypeDropCollection, msgs[len(msgs)-1].Message.Type)
	_, err = c.Collection("", "a")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err))
	dropped, err = c.DropCollection(ctx, "", "a")
	require.NoError(t, err)
	require.Nil(t, dropped)
	// The name can be reused.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "8"), 1, 0, nil))
}

func names(cols []*catalog.Collection) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

func TestMaxCollections(t *testing.T) {
	e := newEnv(t, t.TempDir())
	cfg := Defaults()
	cfg.MaxCollections = 1
	c := e.core(t, cfg)
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "4"), 1, 0, nil))
	err := c.CreateCollection(ctx, "", schemaNamed("b", "4"), 1, 0, nil)
	require.ErrorContains(t, err, "limit number of collections")
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Defaults().Validate())
	for _, cfg := range []Config{{PChannels: 0, ChannelPrefix: "x"}, {PChannels: 1025, ChannelPrefix: "x"}, {PChannels: 1}} {
		require.Error(t, cfg.Validate())
	}
}

func TestPartitions(t *testing.T) {
	e := newEnv(t, t.TempDir())
	c := e.core(t, Defaults())
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("a", "4"), 1, 0, nil))
	require.NoError(t, c.CreatePartition(ctx, "", "a", "p1"))
	col, err := c.Collection("", "a")
	require.NoError(t, err)
	p1, ok := col.Partition("p1")
	require.True(t, ok)
	require.NotZero(t, p1.CreatedTS)
	msgs := e.messages(t, col.PChannels[0])
	require.Equal(t, wal.TypeCreatePartition, msgs[len(msgs)-1].Message.Type)
	require.Equal(t, partitionPayload(p1.ID), msgs[len(msgs)-1].Message.Payload)

	for _, tc := range []struct {
		name, coll, part string
		code             int32
		msg              string
	}{
		{"duplicate", "a", "p1", errcode.IllegalArgument, `partition "p1" already exists`},
		{"bad name", "a", "p.1", errcode.IllegalArgument, "Partition name can only contain numbers, letters and underscores"},
		{"empty name", "a", "", errcode.IllegalArgument, "Partition name should not be empty"},
		{"missing collection", "nope", "p2", errcode.CollectionNotFound, "nope"},
	} {
		t.Run("create "+tc.name, func(t *testing.T) {
			err := c.CreatePartition(ctx, "", tc.coll, tc.part)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
		})
	}
	require.NoError(t, c.CreatePartition(ctx, "", "a", "p2"))

	// A loaded partition, or any partition of a collection loaded whole, cannot be dropped.
	require.NoError(t, c.SetLoaded(ctx, "", "a", true, []int64{p1.ID}))
	_, err = c.DropPartition(ctx, "", "a", "p1")
	require.ErrorContains(t, err, "release it first")
	require.NoError(t, c.SetLoaded(ctx, "", "a", true, nil))
	_, err = c.DropPartition(ctx, "", "a", "p2")
	require.ErrorContains(t, err, "release it first")
	require.NoError(t, c.SetLoaded(ctx, "", "a", false, nil))

	for _, tc := range []struct {
		name, coll, part string
		code             int32
		msg              string
	}{
		{"default", "a", "_default", errcode.IllegalArgument, "default partition"},
		{"missing partition", "a", "zz", errcode.PartitionNotFound, "zz"},
		{"missing collection", "nope", "p1", errcode.CollectionNotFound, "nope"},
	} {
		t.Run("drop "+tc.name, func(t *testing.T) {
			_, err := c.DropPartition(ctx, "", tc.coll, tc.part)
			require.Equal(t, tc.code, errcode.CodeOf(err))
			require.ErrorContains(t, err, tc.msg)
		})
	}
	id, err := c.DropPartition(ctx, "", "a", "p1")
	require.NoError(t, err)
	require.Equal(t, p1.ID, id)
	col, err = c.Collection("", "a")
	require.NoError(t, err)
	_, ok = col.Partition("p1")
	require.False(t, ok)
	msgs = e.messages(t, col.PChannels[0])
	require.Equal(t, wal.TypeDropPartition, msgs[len(msgs)-1].Message.Type)
	require.Equal(t, partitionPayload(p1.ID), msgs[len(msgs)-1].Message.Payload)
}

func TestReloadAfterRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir)
	c := e.core(t, Defaults())
	ctx := context.Background()
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("keep", "4"), 2, 0, nil))
	require.NoError(t, c.CreateDatabase(ctx, "db1", nil))
	require.NoError(t, c.CreateCollection(ctx, "db1", schemaNamed("other", "4"), 1, 0, nil))
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("gone", "4"), 1, 0, nil))
	require.NoError(t, c.CreatePartition(ctx, "", "keep", "p"))
	require.NoError(t, c.SetLoaded(ctx, "", "keep", true, nil))
	_, err := c.DropCollection(ctx, "", "gone")
	require.NoError(t, err)
	before, err := c.Collection("", "keep")
	require.NoError(t, err)
	e.close(t)()

	e = newEnv(t, dir)
	c = e.core(t, Defaults())
	after, err := c.Collection("", "keep")
	require.NoError(t, err)
	require.Equal(t, before.CollectionInfo, after.CollectionInfo)
	require.Equal(t, before.Schema.String(), after.Schema.String())
	require.True(t, after.Loaded)
	_, ok := after.Partition("p")
	require.True(t, ok)
	_, err = c.Collection("db1", "other")
	require.NoError(t, err)
	_, err = c.Collection("", "gone")
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err), "dropped collections stay dropped")
	all, err := c.AllCollections(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	// New IDs do not collide with reloaded ones.
	require.NoError(t, c.CreateCollection(ctx, "", schemaNamed("new", "4"), 1, 0, nil))
	n, err := c.Collection("", "new")
	require.NoError(t, err)
	require.Greater(t, n.ID, after.ID)
}

func TestCreateCollectionPartitionKey(t *testing.T) {
	e := newEnv(t, t.TempDir())
	c := e.core(t, Defaults())
	ctx := context.Background()
	keyed := func(name string) *schemapb.CollectionSchema {
		s := schemaNamed(name, "4")
		s.Fields = append(s.Fields, &schemapb.FieldSchema{Name: "tenant", DataType: schemapb.DataType_Int64, IsPartitionKey: true})
		return s
	}
	for _, tc := range []struct {
		name   string
		schema *schemapb.CollectionSchema
		num    int
		want   []string
		errMsg string
	}{
		{"plain", schemaNamed("plain", "4"), 0, []string{"_default"}, ""},
		{"plain_num", schemaNamed("plain_num", "4"), 8, []string{"_default"}, ""},
		{"key_default", keyed("key_default"), 0, nil, ""},
		{"key_three", keyed("key_three"), 3, []string{"_default_0", "_default_1", "_default_2"}, ""},
		{"key_too_many", keyed("key_too_many"), MaxPartitions + 1, nil, "partition number (1025) exceeds max configuration (1024)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CreateCollectionPartitions(ctx, "", tc.schema, 1, 0, nil, tc.num)
			if tc.errMsg != "" {
				require.ErrorContains(t, err, tc.errMsg)
				return
			}
			require.NoError(t, err)
			col, err := c.Collection("default", tc.name)
			require.NoError(t, err)
			var names []string
			ids := map[int64]bool{col.ID: true}
			for _, p := range col.Partitions {
				names = append(names, p.Name)
				require.False(t, ids[p.ID], "partition IDs are distinct")
				ids[p.ID] = true
			}
			want := tc.want
			if want == nil {
				for i := range DefaultKeyPartitions {
					want = append(want, KeyPartitionName(i))
				}
			}
			require.Equal(t, want, names)
		})
	}
}

// collections lists db's collections (Core.Collections).
func collections(t *testing.T, c *Core, db string) []*catalog.Collection {
	t.Helper()
	cols, err := c.Collections(context.Background(), db)
	require.NoError(t, err)
	return cols
}
