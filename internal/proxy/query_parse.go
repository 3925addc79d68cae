package proxy

import (
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// queryPlan is a query request parsed and validated against its
// collection: the query node's request and what shaping the answer takes.
type queryPlan struct {
	q     *plan.Query
	limit int // -1: none
	out   *outputSpec
	loc   *time.Location // renders Timestamptz output
}

// parseQuery parses and validates a query of col, in the order Milvus
// reports a request's first problem: limit and offset, the time zone, the
// output fields, an empty filter without a limit, partitions, the filter and
// consistency, then ignore_growing. It does no I/O and touches no proxy
// state.
func parseQuery(col *catalog.Collection, req *milvuspb.QueryRequest, env readEnv) (*queryPlan, error) {
	params := req.GetQueryParams()
	if err := checkCollectionID(col, params); err != nil {
		return nil, err
	}
	limit, offset := -1, 0
	if v, found := kvGet(params, "limit"); found && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, errcode.InvalidParam("invalid max query result window, limit [%s] is invalid, should be greater than 0", v)
		}
		limit = n
	}
	if v, found := kvGet(params, "offset"); found && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, errcode.InvalidParam("invalid max query result window, offset [%s] is invalid, should be gte than 0", v)
		}
		offset = n
	}
	if err := checkQueryWindow(offset, limit); err != nil {
		return nil, err
	}
	if limit < 0 {
		offset = 0 // as in Milvus, an offset pages only with a limit
	}
	tz, loc, err := readTimezone(col, params)
	if err != nil {
		return nil, err
	}
	out, err := resolveOutput(col, req.GetOutputFields(), true)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.GetExpr()) == "" && limit < 0 && !out.countAll {
		return nil, errcode.InvalidParam("empty expression should be used with limit")
	}
	q := &plan.Query{Offset: offset, CountOnly: out.countAll}
	q.Timezone = tz
	if limit > 0 {
		q.Limit = limit
	}
	if err := fillRead(col, &q.Read, req.GetExpr(), req.GetExprTemplateValues(), req.GetPartitionNames(), out,
		req.GetConsistencyLevel(), req.GetUseDefaultConsistency(), req.GetGuaranteeTimestamp(), env); err != nil {
		return nil, retrieveError(err)
	}
	if q.IgnoreGrowing, err = ignoreGrowing(params); err != nil {
		return nil, err
	}
	if out.countAll {
		q.OutputFields = nil
	}
	return &queryPlan{q: q, limit: limit, out: out, loc: loc}, nil
}
