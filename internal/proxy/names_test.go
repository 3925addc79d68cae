package proxy

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/wal"
)

// seq allocates increasing IDs and timestamps.
type seq struct{ n atomic.Uint64 }

func (s *seq) Allocate(_ context.Context, n uint32) (uint64, error) {
	return s.n.Add(uint64(n)) - uint64(n) + 1, nil
}

// ddlSink takes the root coordinator's DDL announcements; the name checks
// under test never reach a WAL.
type ddlSink struct{ ts seq }

func (d *ddlSink) Append(ctx context.Context, _ map[string][]wal.Message) (uint64, error) {
	return d.ts.Allocate(ctx, 1)
}
func (d *ddlSink) Watch(string)                               {}
func (d *ddlSink) End(context.Context, string) (int64, error) { return 0, nil }

// namesProxy is a proxy over a real root coordinator (embedded meta store)
// holding one collection, "films". Name checks come before anything else is
// touched, so the data coordinator, query node and WAL are left out.
func namesProxy(t *testing.T) *Proxy {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	kv, err := embedded.Open(filepath.Join(t.TempDir(), "meta.db"), logger)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, kv.Close()) })
	ids := &seq{}
	core, err := rootcoord.New(ctx, rootcoord.Defaults(), kv, ids, ids, &ddlSink{}, logger)
	require.NoError(t, err)
	require.NoError(t, core.CreateCollection(ctx, "default", &schemapb.CollectionSchema{Name: "films", Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}}, 1, commonpb.ConsistencyLevel_Strong, nil))
	return New(Defaults(), CatalogOf(core), DataCoord{}, QueryNode{}, nil, ids, ids, logger)
}

// TestNamesValidatedBeforeLookup: every call that takes a collection name
// checks its form first and answers 1100 with Milvus's wording, never
// "collection not found" (100); partition, alias and database names likewise.
func TestNamesValidatedBeforeLookup(t *testing.T) {
	p := namesProxy(t)
	ctx := context.Background()
	const (
		bad     = "12-s"
		badMsg  = "Invalid collection name: 12-s. the first character of a collection name must be an underscore or letter: invalid parameter"
		badPart = "12 s"
	)
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		name string
		call func() *commonpb.Status
		code int32
		msg  string
	}{
		{"describe_collection", func() *commonpb.Status {
			r, _ := p.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"has_collection", func() *commonpb.Status {
			r, _ := p.HasCollection(ctx, &milvuspb.HasCollectionRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"has_collection too long", func() *commonpb.Status {
			r, _ := p.HasCollection(ctx, &milvuspb.HasCollectionRequest{CollectionName: long})
			return r.GetStatus()
		}, errcode.IllegalArgument, "Invalid collection name: " + long + ". the length of a collection name must be less than 255 characters: invalid parameter"},
		{"load_collection", func() *commonpb.Status {
			r, _ := p.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{CollectionName: bad})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"release_collection", func() *commonpb.Status {
			r, _ := p.ReleaseCollection(ctx, &milvuspb.ReleaseCollectionRequest{CollectionName: "(mn)"})
			return r
		}, errcode.IllegalArgument, "Invalid collection name: (mn). the first character of a collection name must be an underscore or letter: invalid parameter"},
		{"get_load_state", func() *commonpb.Status {
			r, _ := p.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"get_collection_stats", func() *commonpb.Status {
			r, _ := p.GetCollectionStatistics(ctx, &milvuspb.GetCollectionStatisticsRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"insert", func() *commonpb.Status {
			r, _ := p.Insert(ctx, &milvuspb.InsertRequest{CollectionName: "a b"})
			return r.GetStatus()
		}, errcode.IllegalArgument, "Invalid collection name: a b. collection name can only contain numbers, letters and underscores: invalid parameter"},
		{"upsert", func() *commonpb.Status {
			r, _ := p.Upsert(ctx, &milvuspb.UpsertRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"delete", func() *commonpb.Status {
			r, _ := p.Delete(ctx, &milvuspb.DeleteRequest{CollectionName: bad, Expr: "id > 0"})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"query", func() *commonpb.Status {
			r, _ := p.Query(ctx, &milvuspb.QueryRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"flush", func() *commonpb.Status {
			r, _ := p.Flush(ctx, &milvuspb.FlushRequest{CollectionNames: []string{bad}})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"describe_index", func() *commonpb.Status {
			r, _ := p.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"drop_index", func() *commonpb.Status {
			r, _ := p.DropIndex(ctx, &milvuspb.DropIndexRequest{CollectionName: bad})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"show_partitions", func() *commonpb.Status {
			r, _ := p.ShowPartitions(ctx, &milvuspb.ShowPartitionsRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, badMsg},
		{"create_partition bad collection", func() *commonpb.Status {
			r, _ := p.CreatePartition(ctx, &milvuspb.CreatePartitionRequest{CollectionName: bad, PartitionName: "p"})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"load_partitions bad collection", func() *commonpb.Status {
			r, _ := p.LoadPartitions(ctx, &milvuspb.LoadPartitionsRequest{CollectionName: bad, PartitionNames: []string{"p"}})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"create_partition", func() *commonpb.Status {
			r, _ := p.CreatePartition(ctx, &milvuspb.CreatePartitionRequest{CollectionName: "films", PartitionName: badPart})
			return r
		}, errcode.IllegalArgument, "Invalid partition name: 12 s. Partition name can only contain numbers, letters and underscores."},
		{"drop_partition", func() *commonpb.Status {
			r, _ := p.DropPartition(ctx, &milvuspb.DropPartitionRequest{CollectionName: "films", PartitionName: "%$#"})
			return r
		}, errcode.IllegalArgument, "Invalid partition name: %$#. The first character of a partition name must be an underscore or letter."},
		{"has_partition", func() *commonpb.Status {
			r, _ := p.HasPartition(ctx, &milvuspb.HasPartitionRequest{CollectionName: "films", PartitionName: badPart})
			return r.GetStatus()
		}, errcode.IllegalArgument, "Invalid partition name: 12 s."},
		{"release_partitions", func() *commonpb.Status {
			r, _ := p.ReleasePartitions(ctx, &milvuspb.ReleasePartitionsRequest{CollectionName: "films", PartitionNames: []string{"(mn)"}})
			return r
		}, errcode.IllegalArgument, "Invalid partition name: (mn). The first character of a partition name must be an underscore or letter."},
		{"insert bad partition", func() *commonpb.Status {
			r, _ := p.Insert(ctx, &milvuspb.InsertRequest{CollectionName: "films", PartitionName: " "})
			return r.GetStatus()
		}, errcode.IllegalArgument, "Invalid partition name: . Partition name should not be empty."},
		{"create_alias", func() *commonpb.Status {
			r, _ := p.CreateAlias(ctx, &milvuspb.CreateAliasRequest{CollectionName: "films", Alias: bad})
			return r
		}, errcode.IllegalArgument, "Invalid collection alias: 12-s. the first character of a collection alias must be an underscore or letter: invalid parameter"},
		{"create_alias bad collection", func() *commonpb.Status {
			r, _ := p.CreateAlias(ctx, &milvuspb.CreateAliasRequest{CollectionName: bad, Alias: "movies"})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"alter_alias bad collection", func() *commonpb.Status {
			r, _ := p.AlterAlias(ctx, &milvuspb.AlterAliasRequest{CollectionName: bad, Alias: "movies"})
			return r
		}, errcode.IllegalArgument, badMsg},
		{"drop_alias", func() *commonpb.Status {
			r, _ := p.DropAlias(ctx, &milvuspb.DropAliasRequest{Alias: bad})
			return r
		}, errcode.IllegalArgument, "Invalid collection alias: 12-s."},
		{"describe_alias", func() *commonpb.Status {
			r, _ := p.DescribeAlias(ctx, &milvuspb.DescribeAliasRequest{Alias: bad})
			return r.GetStatus()
		}, errcode.IllegalArgument, "Invalid collection alias: 12-s."},
		{"drop_database", func() *commonpb.Status {
			r, _ := p.DropDatabase(ctx, &milvuspb.DropDatabaseRequest{DbName: "12 s"})
			return r
		}, errcode.DatabaseInvalidName, "the first character of a database name must be an underscore or letter: invalid database name[database=12 s]"},
		// Valid names that name nothing are looked up and not found.
		{"describe_collection missing", func() *commonpb.Status {
			r, _ := p.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{CollectionName: "nonexisted"})
			return r.GetStatus()
		}, errcode.CollectionNotFound, "can't find collection[database=default][collection=nonexisted]"},
		{"alter_alias missing", func() *commonpb.Status {
			r, _ := p.AlterAlias(ctx, &milvuspb.AlterAliasRequest{CollectionName: "nonexisted", Alias: "movies"})
			return r
		}, errcode.CollectionNotFound, "collection not found[collection=nonexisted]"},
		// Calls Milvus answers with a lookup whatever the name.
		{"search", func() *commonpb.Status {
			r, _ := p.Search(ctx, &milvuspb.SearchRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.CollectionNotFound, "collection not found[database=default][collection=12-s]"},
		{"hybrid_search", func() *commonpb.Status {
			r, _ := p.HybridSearch(ctx, &milvuspb.HybridSearchRequest{CollectionName: bad})
			return r.GetStatus()
		}, errcode.CollectionNotFound, "collection not found[database=default][collection=12-s]"},
		{"create_index", func() *commonpb.Status {
			r, _ := p.CreateIndex(ctx, &milvuspb.CreateIndexRequest{CollectionName: bad, FieldName: "v"})
			return r
		}, errcode.CollectionNotFound, "collection not found[database=default][collection=12-s]"},
		{"alter_collection", func() *commonpb.Status {
			r, _ := p.AlterCollection(ctx, &milvuspb.AlterCollectionRequest{CollectionName: "%$#"})
			return r
		}, errcode.CollectionNotFound, "collection not found[database=default][collection=%$#]"},
		{"rename_collection old name", func() *commonpb.Status {
			r, _ := p.RenameCollection(ctx, &milvuspb.RenameCollectionRequest{OldName: bad, NewName: "fresh"})
			return r
		}, errcode.CollectionNotFound, "collection not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.call()
			require.Equal(t, tc.code, st.GetCode(), st.GetReason())
			require.Contains(t, st.GetReason(), tc.msg)
		})
	}
}

// TestNamesHasAndDropMissing: has_collection on a valid missing name is a
// false, not an error; drop_collection does not check the name's form and
// dropping a missing collection succeeds, as in Milvus.
func TestNamesHasAndDropMissing(t *testing.T) {
	p := namesProxy(t)
	ctx := context.Background()
	has, err := p.HasCollection(ctx, &milvuspb.HasCollectionRequest{CollectionName: "nonexisted"})
	require.NoError(t, err)
	require.Zero(t, has.GetStatus().GetCode())
	require.False(t, has.GetValue())
	has, err = p.HasCollection(ctx, &milvuspb.HasCollectionRequest{CollectionName: "films"})
	require.NoError(t, err)
	require.True(t, has.GetValue())
	for _, name := range []string{"nonexisted", "12-s"} {
		st, err := p.DropCollection(ctx, &milvuspb.DropCollectionRequest{CollectionName: name})
		require.NoError(t, err)
		require.Zero(t, st.GetCode(), st.GetReason())
	}
}

// TestNamesKeywordField: create_collection refuses a field named by a
// filter-language keyword with 1701 and Milvus's message.
func TestNamesKeywordField(t *testing.T) {
	p := namesProxy(t)
	ctx := context.Background()
	for _, kw := range []string{"like", "and", "not", "in", "exists", "EXISTS", "json_contains", "ARRAY_LENGTH", "TRUE", "false", "text_match", "RANDOM_SAMPLE"} {
		t.Run(kw, func(t *testing.T) {
			b, err := proto.Marshal(&schemapb.CollectionSchema{Name: "kw", Fields: []*schemapb.FieldSchema{
				{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
				{Name: kw, DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
			}})
			require.NoError(t, err)
			st, err := p.CreateCollection(ctx, &milvuspb.CreateCollectionRequest{CollectionName: "kw", Schema: b})
			require.NoError(t, err)
			require.Equal(t, errcode.FieldInvalidName, st.GetCode())
			require.Equal(t, "Invalid field name: "+kw+". "+kw+" is keyword in milvus.: field name invalid[field="+kw+"]", st.GetReason())
		})
	}
}
