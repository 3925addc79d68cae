package proxy

import (
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// queryReq is a query of parseColl with a filter and the given query
// parameters.
func queryReq(filter string, pairs ...string) *milvuspb.QueryRequest {
	return &milvuspb.QueryRequest{CollectionName: "c", Expr: filter, QueryParams: kvs(pairs...)}
}

// TestParseQueryAccepts: each accepted form of a query becomes the query
// node's request and the answer's shape as the proxy runs them.
func TestParseQueryAccepts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		col   *catalog.Collection
		req   *milvuspb.QueryRequest
		check func(*testing.T, *queryPlan)
	}{
		{"filter only", nil, queryReq("n > 1"), func(t *testing.T, qp *queryPlan) {
			q := qp.q
			require.Equal(t, "n > 1", q.Filter)
			require.Equal(t, -1, qp.limit)
			require.Zero(t, q.Limit)
			require.Zero(t, q.Offset)
			require.False(t, q.CountOnly)
			require.Equal(t, []int64{100}, q.OutputFields, "the primary key is always output")
			require.Equal(t, []string{"id"}, qp.out.names)
			require.Equal(t, int64(7), q.CollectionID)
			require.True(t, q.Strong)
			require.Equal(t, "UTC", q.Timezone)
			require.Equal(t, "UTC", qp.loc.String())
		}},
		{"limit and offset", nil, queryReq("", "limit", "10", "offset", "5"), func(t *testing.T, qp *queryPlan) {
			require.Equal(t, 10, qp.q.Limit)
			require.Equal(t, 10, qp.limit)
			require.Equal(t, 5, qp.q.Offset)
		}},
		{"empty limit and offset are none", nil, queryReq("n > 1", "limit", "", "offset", ""), func(t *testing.T, qp *queryPlan) {
			require.Equal(t, -1, qp.limit)
			require.Zero(t, qp.q.Offset)
		}},
		{"an offset without a limit is ignored", nil, queryReq("n > 1", "offset", "5"), func(t *testing.T, qp *queryPlan) {
			require.Zero(t, qp.q.Offset)
			require.Equal(t, -1, qp.limit)
		}},
		{"limit 0", nil, queryReq("", "limit", "0"), func(t *testing.T, qp *queryPlan) {
			require.Zero(t, qp.limit)
			require.Zero(t, qp.q.Limit)
		}},
		{"the full window", nil, queryReq("", "limit", "16000", "offset", "384"), func(t *testing.T, qp *queryPlan) {
			require.Equal(t, 16000, qp.q.Limit)
			require.Equal(t, 384, qp.q.Offset)
		}},
		{"count(*) without a filter", nil, &milvuspb.QueryRequest{OutputFields: []string{"count(*)"}}, func(t *testing.T, qp *queryPlan) {
			require.True(t, qp.q.CountOnly)
			require.Nil(t, qp.q.OutputFields)
			require.Equal(t, []string{"count(*)"}, qp.out.names)
		}},
		{"output fields", nil, &milvuspb.QueryRequest{Expr: "n > 1", OutputFields: []string{"tag", "v", "color"}}, func(t *testing.T, qp *queryPlan) {
			require.Equal(t, []int64{102, 101, 106, 100}, qp.q.OutputFields)
			require.Equal(t, []string{"tag", "v", "color", "id"}, qp.out.names)
		}},
		{"partitions", nil, &milvuspb.QueryRequest{Expr: "n > 1", PartitionNames: []string{"p1"}}, func(t *testing.T, qp *queryPlan) {
			require.Equal(t, []int64{2}, qp.q.PartitionIDs)
		}},
		{
			"eventually", nil, &milvuspb.QueryRequest{Expr: "n > 1", ConsistencyLevel: commonpb.ConsistencyLevel_Eventually},
			func(t *testing.T, qp *queryPlan) {
				require.False(t, qp.q.Strong)
				require.Equal(t, uint64(1), qp.q.GuaranteeTS)
			},
		},
		{
			"bounded", nil, &milvuspb.QueryRequest{Expr: "n > 1", ConsistencyLevel: commonpb.ConsistencyLevel_Bounded},
			func(t *testing.T, qp *queryPlan) {
				require.Equal(t, uint64(parseNow.Add(-5*time.Second).UnixMilli())<<18, qp.q.GuaranteeTS)
			},
		},
		{"the collection's level by default", strongColl(), &milvuspb.QueryRequest{
			Expr: "n > 1", UseDefaultConsistency: true,
			ConsistencyLevel: commonpb.ConsistencyLevel_Eventually,
		}, func(t *testing.T, qp *queryPlan) {
			require.True(t, qp.q.Strong)
		}},
		{
			"ignore_growing and timezone", nil, queryReq("n > 1", "ignore_growing", "true", "timezone", "Europe/Paris"),
			func(t *testing.T, qp *queryPlan) {
				require.True(t, qp.q.IgnoreGrowing)
				require.Equal(t, "Europe/Paris", qp.q.Timezone)
				require.Equal(t, "Europe/Paris", qp.loc.String())
			},
		},
		{"the collection's time zone", tzColl("Asia/Shanghai"), queryReq("n > 1"), func(t *testing.T, qp *queryPlan) {
			require.Equal(t, "Asia/Shanghai", qp.q.Timezone)
		}},
		{"collection_id of this collection", nil, queryReq("n > 1", "collection_id", "7"), func(t *testing.T, qp *queryPlan) {
			require.Equal(t, int64(7), qp.q.CollectionID)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := tc.col
			if col == nil {
				col = parseColl()
			}
			qp, err := parseQuery(col, tc.req, testEnv())
			require.NoError(t, err)
			tc.check(t, qp)
		})
	}
}

// TestParseQueryRefuses: each refusal with Milvus's code and message, the
// first problem of a request reported.
func TestParseQueryRefuses(t *testing.T) {
	const bad = errcode.IllegalArgument
	for _, tc := range []struct {
		name string
		col  *catalog.Collection
		req  *milvuspb.QueryRequest
		code int32
		msg  string
	}{
		{
			"collection_id of another collection", nil, queryReq("n >", "collection_id", "8", "limit", "-1"), bad,
			"collection c now has id 7, not 8: the alias or database may have been changed",
		},
		{
			"negative limit", nil, queryReq("n >", "limit", "-1"), bad,
			"invalid max query result window, limit [-1] is invalid, should be greater than 0: invalid parameter",
		},
		{
			"limit not an integer", nil, queryReq("", "limit", "ten"), bad,
			"invalid max query result window, limit [ten] is invalid, should be greater than 0: invalid parameter",
		},
		{
			"negative offset", nil, queryReq("", "limit", "10", "offset", "-2"), bad,
			"invalid max query result window, offset [-2] is invalid, should be gte than 0: invalid parameter",
		},
		{
			"window too large", nil, queryReq("", "limit", "16000", "offset", "385"), bad,
			"invalid max query result window, (offset+limit) should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"unknown time zone", nil, queryReq("", "limit", "1", "timezone", "Nowhere"), bad,
			"unknown or invalid IANA Time Zone ID: Nowhere: invalid parameter",
		},
		{"unknown output field", noDynamicColl(), &milvuspb.QueryRequest{OutputFields: []string{"nope"}}, bad, "field nope not exist"},
		{
			"count(*) with other fields", nil, &milvuspb.QueryRequest{OutputFields: []string{"n", "count(*)"}}, bad,
			"count entities with other output fields is not supported: [n count(*)]",
		},
		{"no filter and no limit", nil, queryReq("  "), bad, "empty expression should be used with limit: invalid parameter"},
		{
			"partition names in partition key mode", keyColl(), &milvuspb.QueryRequest{Expr: "n >", PartitionNames: []string{"p1"}}, bad,
			"not support manually specifying the partition names if partition key mode is used",
		},
		{
			"unknown partition", nil, &milvuspb.QueryRequest{Expr: "n >", PartitionNames: []string{"nope"}},
			errcode.PartitionNotFound, "partition name nope not found",
		},
		{"filter", nil, queryReq("n >"), bad, ""},
		{
			"an unknown function, refused as Milvus's query engine refuses the plan", nil, queryReq("st_nope(n, 1)"), bad,
			"Create retrieve plan by expr failed: failed to create query plan: cannot parse expression: st_nope(n, 1), " +
				"error: unknown function st_nope: invalid parameter[position=0]",
		},
		{
			"ignore_growing not a boolean", nil, queryReq("n > 1", "ignore_growing", "sometimes"), bad,
			`parse ignore growing field failed: "sometimes" is not a boolean`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := tc.col
			if col == nil {
				col = parseColl()
			}
			qp, err := parseQuery(col, tc.req, testEnv())
			require.Error(t, err)
			require.Nil(t, qp)
			require.Equal(t, tc.code, errcode.CodeOf(err), err.Error())
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Error())
			} else {
				require.Contains(t, err.Error(), "failed to create query plan: ")
			}
		})
	}
}

// tzColl gives parseColl a timezone property.
func tzColl(tz string) *catalog.Collection {
	c := parseColl()
	c.Properties = map[string]string{"timezone": tz}
	return c
}
