package proxy

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
)

// outputSpec is a resolved output_fields list.
type outputSpec struct {
	ids      []int64
	names    []string // as reported in output_fields
	dynKeys  []string // dynamic keys asked for by name; nil with allDyn
	allDyn   bool     // the whole `$meta` was asked for
	countAll bool
}

func (o *outputSpec) add(id int64) {
	for _, x := range o.ids {
		if x == id {
			return
		}
	}
	o.ids = append(o.ids, id)
}

func resolveOutput(col *catalog.Collection, names []string, withPK bool) (*outputSpec, error) {
	o := &outputSpec{}
	dyn := col.DynamicField()
	pk := col.PKField()
	for _, raw := range names {
		name := strings.TrimSpace(raw)
		switch {
		case name == "":
			continue
		case strings.EqualFold(name, "count(*)"):
			if len(names) != 1 {
				return nil, errcode.Invalid("count entities with other output fields is not supported: %v", names)
			}
			o.countAll = true
			o.names = []string{"count(*)"}
			return o, nil
		case name == "*":
			for _, f := range col.Schema.GetFields() {
				if f.GetFieldID() < 100 || !retrievable(col, f) {
					continue
				}
				o.add(f.GetFieldID())
				if f.GetIsDynamic() {
					o.allDyn = true
				}
			}
			continue
		}
		if structOutput(col, o, name) {
			continue
		}
		if key, ok := metaKey(name); ok && dyn != nil {
			if f := col.Field(key); f != nil && !f.GetIsDynamic() {
				continue // a static field of that name hides the key (Milvus issue 41702)
			}
			name = key
		}
		if f := col.Field(name); f != nil && f.GetFieldID() >= 100 {
			if !retrievable(col, f) {
				return nil, errcode.Invalid("not allowed to retrieve raw data of field %s", name)
			}
			o.add(f.GetFieldID())
			if f.GetIsDynamic() {
				o.allDyn = true
			}
			continue
		}
		if dyn == nil {
			return nil, errcode.Invalid("field %s not exist", name)
		}
		if !validDynamicKey(name) {
			return nil, errcode.Invalid("field %s not exist", name)
		}
		o.add(dyn.GetFieldID())
		o.dynKeys = append(o.dynKeys, name)
	}
	if withPK {
		o.add(pk.GetFieldID())
	}
	for _, id := range o.ids {
		for _, f := range col.Schema.GetFields() {
			if f.GetFieldID() == id {
				if f.GetIsDynamic() && !o.allDyn {
					o.names = append(o.names, o.dynKeys...)
				} else {
					o.names = append(o.names, f.GetName())
				}
			}
		}
	}
	structOutputNames(col, o)
	return o, nil
}

func validDynamicKey(s string) bool {
	for i, c := range s {
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return s != ""
}

// fieldsData converts result columns into response columns in output order.
func fieldsData(col *catalog.Collection, o *outputSpec, cols map[int64]column.Column) ([]*schemapb.FieldData, error) {
	var out []*schemapb.FieldData
	for _, id := range o.ids {
		var f *schemapb.FieldSchema
		for _, x := range col.Schema.GetFields() {
			if x.GetFieldID() == id {
				f = x
			}
		}
		c := cols[id]
		if c == nil {
			var err error
			if c, err = column.New(f); err != nil {
				return nil, err
			}
		}
		if f.GetIsDynamic() && !o.allDyn {
			c = filterDynamic(c.(*column.JSONs), o.dynKeys)
		}
		fd, err := column.GeometryToWKT(column.ToFieldData(f.GetName(), id, c))
		if err != nil {
			return nil, err
		}
		fd.IsDynamic = f.GetIsDynamic()
		out = append(out, fd)
	}
	return joinStructs(col, out), nil
}

// filterDynamic keeps only the requested keys of each `$meta` object.
func filterDynamic(c *column.JSONs, keys []string) *column.JSONs {
	out := &column.JSONs{Data: make([][]byte, len(c.Data))}
	for i, b := range c.Data {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			out.Data[i] = []byte("{}")
			continue
		}
		kept := map[string]json.RawMessage{}
		for _, k := range keys {
			if v, ok := m[k]; ok {
				kept[k] = v
			}
		}
		out.Data[i], _ = json.Marshal(kept)
	}
	return out
}

func searchError(err error) *milvuspb.SearchResults {
	return &milvuspb.SearchResults{Status: errcode.Status(err)}
}

// Search runs a vector search.
func (p *Proxy) Search(ctx context.Context, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	col, err := p.lookup(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return searchError(err), nil
	}
	if err := p.admitSearch(col, int(req.GetNq())); err != nil {
		return searchError(err), nil
	}
	return p.search(ctx, col, req)
}

// search runs a search of col: it parses the request (parseSearch), reads
// the query vectors of a search by primary keys, runs it on the query node
// and shapes the answer.
func (p *Proxy) search(ctx context.Context, col *catalog.Collection, req *milvuspb.SearchRequest) (*milvuspb.SearchResults, error) {
	env, err := p.searchEnv(ctx, col)
	if err != nil {
		return searchError(err), nil
	}
	sp, err := parseSearch(col, req, env)
	if err != nil {
		return searchError(err), nil
	}
	if sp.byPK != nil {
		if err := p.bindPKVectors(ctx, col, sp); err != nil {
			return searchError(err), nil
		}
	}
	sreq := sp.sreq
	res, err := p.query.Search(ctx, sreq)
	if err != nil {
		return searchError(err), nil
	}
	if sp.ranker != nil {
		if err := rerankResult(ctx, sp.ranker, res, sp.metric); err != nil {
			return searchError(err), nil
		}
	}
	topk, offset := sp.topk, sp.offset
	if sreq.GroupByField != 0 {
		// Hits are TopK groups of up to GroupSize hits; offset and limit count groups.
		skipGroups(res, offset)
		topk = MaxTopK * max(sreq.GroupSize, 1)
		offset = 0
	}
	resp, err := p.searchResults(col, sp.out, res, sreq.NQ(), topk, offset, sp.round)
	if err != nil || resp.GetStatus().GetCode() != 0 {
		return resp, err
	}
	sp.hl.attach(resp, sp.userOut)
	if sreq.GroupByField != 0 && res.GroupValues != nil {
		for _, f := range col.Schema.GetFields() {
			if f.GetFieldID() == sreq.GroupByField {
				resp.Results.GroupByFieldValue = column.ToFieldData(f.GetName(), f.GetFieldID(), res.GroupValues)
			}
		}
	}
	timestamptzOut(sp.loc, append(resp.Results.FieldsData, resp.Results.GroupByFieldValue)...)
	if iter := sp.iter; iter != nil {
		iter.LastBound = 0
		if sc := resp.Results.GetScores(); len(sc) > 0 {
			iter.LastBound = sc[len(sc)-1]
		} else if sreq.HasAfter {
			iter.LastBound = sreq.After
		}
		resp.Results.SearchIteratorV2Results = iter
	}
	return resp, nil
}

// bindPKVectors reads the stored vectors of a search by primary keys and
// makes them the plan's query vectors (a null one gets no hits).
func (p *Proxy) bindPKVectors(ctx context.Context, col *catalog.Collection, sp *searchPlan) error {
	stored, rows, err := p.vectorsByPK(ctx, col, sp.field, sp.byPK)
	if err != nil {
		return err
	}
	sp.sreq.NullQueries = nullQueries(stored, rows)
	if sp.field.GetDataType() == schemapb.DataType_SparseFloatVector {
		sp.sreq.Sparse, err = sparseRows(stored, rows)
	} else {
		sp.sreq.Vectors, sp.sreq.Binary, err = rowVectors(stored, rows)
	}
	return err
}

// metaKey reads an output field written as a key of the dynamic field,
// $meta["key"] (or $meta['key']), as Milvus accepts it.
func metaKey(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "$meta[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, "]")
	if len(rest) < 3 || (rest[0] != '"' && rest[0] != '\'') || rest[len(rest)-1] != rest[0] {
		return "", false
	}
	return rest[1 : len(rest)-1], true
}

// skipGroups drops the hits of the first offset groups of every query of a
// grouping search (a query's hits come group by group), with their rows of
// the output and group-value columns.
func skipGroups(res *plan.SearchResult, offset int) {
	if offset <= 0 || res.GroupValues == nil {
		return
	}
	var keep []int
	base := 0
	for q, hits := range res.Hits {
		var kept []plan.Hit
		groups := 0
		var last any
		for i, h := range hits {
			k := column.GroupKey(res.GroupValues, base+i)
			if i == 0 || k != last {
				groups++
				last = k
			}
			if groups > offset {
				kept = append(kept, h)
				keep = append(keep, base+i)
			}
		}
		base += len(hits)
		res.Hits[q] = kept
	}
	for id, c := range res.Fields {
		res.Fields[id] = c.Take(keep)
	}
	res.GroupValues = res.GroupValues.Take(keep)
}

// segcoreTypeName names a data type as Milvus's query engine does in its
// errors (FLOAT, VECTOR_FLOAT, ...).
func segcoreTypeName(t schemapb.DataType) string {
	switch t {
	case schemapb.DataType_FloatVector:
		return "VECTOR_FLOAT"
	case schemapb.DataType_BinaryVector:
		return "VECTOR_BINARY"
	case schemapb.DataType_Float16Vector:
		return "VECTOR_FLOAT16"
	case schemapb.DataType_BFloat16Vector:
		return "VECTOR_BFLOAT16"
	case schemapb.DataType_SparseFloatVector:
		return "VECTOR_SPARSE_FLOAT"
	case schemapb.DataType_Int8Vector:
		return "VECTOR_INT8"
	}
	return strings.ToUpper(t.String())
}

// parseIterator reads the search-iterator v2 parameters: the batch size
// replaces topk and the last bound of the previous batch restricts hits to
// strictly worse scores. It returns nil when the request is not an iterator.
func parseIterator(params []*commonpb.KeyValuePair, sreq *plan.Search, topk *int, now time.Time) (*schemapb.SearchIteratorV2Results, error) {
	if !parseBool(kvValue(params, "iterator")) || !parseBool(kvValue(params, "search_iter_v2")) {
		return nil, nil
	}
	if v := kvValue(params, "search_iter_batch_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > MaxTopK {
			return nil, errcode.Invalid("search_iter_batch_size %q should be an integer in [1, %d]", v, MaxTopK)
		}
		*topk = n
	}
	if v := kvValue(params, "search_iter_last_bound"); v != "" {
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return nil, errcode.Invalid("search_iter_last_bound %q is not a number", v)
		}
		sreq.After, sreq.HasAfter = float32(f), true
	} else {
		// The first page is scored as the later ones are (an exact scan
		// below a bound, here the best possible score), so a row at a page's
		// boundary cannot score differently on the next page and come back.
		sreq.After, sreq.HasAfter = float32(math.Inf(-1)), true
		if plan.HigherIsBetter(sreq.Metric) {
			sreq.After = float32(math.Inf(1))
		}
	}
	token := kvValue(params, "search_iter_id")
	if token == "" {
		token = strconv.FormatInt(now.UnixNano(), 36)
	}
	return &schemapb.SearchIteratorV2Results{Token: token}, nil
}

// ignoreGrowing reads the "ignore_growing" search or query parameter: a
// boolean as strconv.ParseBool reads it (pymilvus sends "True" or "False"),
// false when absent.
func ignoreGrowing(kvs []*commonpb.KeyValuePair) (bool, error) {
	v, found := kvGet(kvs, "ignore_growing")
	if !found || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errcode.Invalid("parse ignore growing field failed: %q is not a boolean", v)
	}
	return b, nil
}

func kvValue(kvs []*commonpb.KeyValuePair, key string) string {
	v, _ := kvGet(kvs, key)
	return v
}

func toFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	}
	return 0, false
}

// fillRead completes the common part of a read request and validates the filter.
func fillRead(col *catalog.Collection, r *plan.Read, filter string, templates map[string]*schemapb.TemplateValue,
	partNames []string, out *outputSpec, level commonpb.ConsistencyLevel, useDefault bool, gts uint64, env readEnv,
) error {
	if r.Timezone == "" {
		r.Timezone = collectionTimezone(col)
	}
	if len(partNames) > 0 && partitionKeyField(col) != nil {
		return errKeyModePartitionNames
	}
	parts, err := readPartitionIDs(col, partNames)
	if err != nil {
		return err
	}
	if filter != "" {
		if _, err := expr.CompileTZ(filter, col.Schema, templates, r.Timezone); err != nil {
			return filterError(err)
		}
	}
	r.CollectionID = col.ID
	r.PartitionIDs = parts
	r.Filter = filter
	r.Templates = templates
	r.OutputFields = out.ids
	r.GuaranteeTS, r.Strong = env.consistency(col, level, useDefault, gts)
	return nil
}

// errMultipleAnns is Milvus's answer to a search that names no anns_field
// in a collection with several vector fields.
var errMultipleAnns = errcode.Invalid("multiple anns_fields exist, please specify a anns_field in search_params")

func annsField(col *catalog.Collection, name string) (*schemapb.FieldSchema, error) {
	if name != "" {
		f := col.Field(name)
		if f == nil || !isVectorType(f.GetDataType()) && f.GetDataType() != schemapb.DataType_ArrayOfVector {
			return nil, errcode.InvalidParam("failed to create query plan: failed to get field schema by name: fieldName(%s) not found", name)
		}
		return f, nil
	}
	var found *schemapb.FieldSchema
	for _, f := range col.Schema.GetFields() {
		if isVectorType(f.GetDataType()) {
			if found != nil {
				return nil, errMultipleAnns
			}
			found = f
		}
	}
	if found == nil {
		return nil, errcode.Invalid("the collection has no vector field")
	}
	return found, nil
}

func parsePlaceholders(raw []byte, dim int) ([][]float32, error) {
	ph, err := onePlaceholder(raw)
	if err != nil {
		return nil, err
	}
	if ph.GetType() != commonpb.PlaceholderType_FloatVector {
		return nil, errcode.Invalid("query vectors of type %s do not match the float vector field", ph.GetType())
	}
	if len(ph.GetValues()) == 0 {
		return nil, errcode.Invalid("no query vectors were sent")
	}
	out := make([][]float32, len(ph.GetValues()))
	for i, b := range ph.GetValues() {
		if len(b) != dim*4 {
			return nil, errcode.Invalid("the dimension of query vector %d is %d, but the field's dimension is %d", i, len(b)/4, dim)
		}
		v := make([]float32, dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			if math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
				return nil, errcode.Invalid("query vector %d contains NaN or Inf", i)
			}
		}
		out[i] = v
	}
	return out, nil
}

func roundScore(s float32, round int) float32 {
	if round < 0 {
		return s
	}
	m := math.Pow(10, float64(round))
	return float32(math.Round(float64(s)*m) / m)
}

func (p *Proxy) searchResults(col *catalog.Collection, out *outputSpec, res *plan.SearchResult, nq, topk, offset, round int) (*milvuspb.SearchResults, error) {
	pk := col.PKField()
	data := &schemapb.SearchResultData{
		NumQueries: int64(nq), TopK: int64(topk), OutputFields: out.names,
		PrimaryFieldName: pk.GetName(),
	}
	var keep []int
	var intIDs []int64
	var strIDs []string
	var elems []int64
	base := 0
	for q := 0; q < nq; q++ {
		var hits []plan.Hit
		if q < len(res.Hits) {
			hits = res.Hits[q]
		}
		start := min(offset, len(hits))
		end := min(start+topk, len(hits))
		for i := start; i < end; i++ {
			keep = append(keep, base+i)
			elems = append(elems, int64(hits[i].Element-1))
			data.Scores = append(data.Scores, roundScore(hits[i].Score, round))
			switch v := hits[i].PK.(type) {
			case int64:
				intIDs = append(intIDs, v)
			case string:
				strIDs = append(strIDs, v)
			}
		}
		data.Topks = append(data.Topks, int64(end-start))
		base += len(hits)
	}
	if pk.GetDataType() == schemapb.DataType_VarChar {
		data.Ids = &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: strIDs}}}
	} else {
		data.Ids = &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: intIDs}}}
	}
	data.ElementIndices = elementIndices(elems)
	cols := map[int64]column.Column{}
	for id, c := range res.Fields {
		cols[id] = c.Take(keep)
	}
	fds, err := fieldsData(col, out, cols)
	if err != nil {
		return searchError(err), nil
	}
	data.FieldsData = fds
	return &milvuspb.SearchResults{Status: ok(), Results: data, CollectionName: col.Name}, nil
}

func queryError(err error) *milvuspb.QueryResults {
	return &milvuspb.QueryResults{Status: errcode.Status(err)}
}

// Query retrieves rows by filter, or counts them.
func (p *Proxy) Query(ctx context.Context, req *milvuspb.QueryRequest) (*milvuspb.QueryResults, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return queryError(err), nil
	}
	if err := p.admitQuery(col); err != nil {
		return queryError(err), nil
	}
	qp, err := parseQuery(col, req, p.readEnv())
	if err != nil {
		return queryError(err), nil
	}
	out := qp.out
	res, err := p.query.Query(ctx, qp.q)
	if err != nil {
		return queryError(err), nil
	}
	resp := &milvuspb.QueryResults{
		Status: ok(), CollectionName: col.Name, OutputFields: out.names,
		PrimaryFieldName: col.PKField().GetName(),
	}
	if out.countAll {
		resp.FieldsData = []*schemapb.FieldData{column.ToFieldData("count(*)", 0,
			&column.Ints{T: schemapb.DataType_Int64, Data: []int64{res.Count}})}
		return resp, nil
	}
	if qp.limit == 0 {
		res.Fields = map[int64]column.Column{}
	}
	fds, err := fieldsData(col, out, res.Fields)
	if err != nil {
		return queryError(err), nil
	}
	timestamptzOut(qp.loc, fds...)
	resp.FieldsData = fds
	return resp, nil
}

// deleteKeys returns the primary keys a delete expression selects.
func (p *Proxy) deleteKeys(ctx context.Context, col *catalog.Collection, partID int64, filter string,
	templates map[string]*schemapb.TemplateValue, level commonpb.ConsistencyLevel,
) (column.Column, error) {
	e, err := expr.Compile(filter, col.Schema, templates)
	if err != nil {
		return nil, filterError(err)
	}
	if pks, found := e.PKValues(); found {
		return pks, nil
	}
	q := &plan.Query{Read: plan.Read{
		CollectionID: col.ID, Filter: filter, Templates: templates,
		OutputFields: []int64{col.PKField().GetFieldID()}, Strong: true,
	}}
	if partID >= 0 {
		q.PartitionIDs = []int64{partID}
	}
	_ = level
	res, err := p.query.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	pks := res.Fields[col.PKField().GetFieldID()]
	if pks == nil {
		return column.New(col.PKField())
	}
	return pks, nil
}

// vectorsByPK fetches the stored vectors of the given primary keys for
// search by primary key: the vector field's column and, for each key in
// order, its row there.
func (p *Proxy) vectorsByPK(ctx context.Context, col *catalog.Collection, field *schemapb.FieldSchema, ids *schemapb.IDs) (column.Column, []int, error) {
	pk := col.PKField()
	var filter string
	var want []any
	if s := ids.GetStrId().GetData(); len(s) > 0 {
		b, _ := json.Marshal(s)
		filter = fmt.Sprintf("%s in %s", pk.GetName(), b)
		for _, v := range s {
			want = append(want, v)
		}
	} else {
		b, _ := json.Marshal(ids.GetIntId().GetData())
		filter = fmt.Sprintf("%s in %s", pk.GetName(), b)
		for _, v := range ids.GetIntId().GetData() {
			want = append(want, v)
		}
	}
	res, err := p.query.Query(ctx, &plan.Query{Read: plan.Read{
		CollectionID: col.ID, Filter: filter,
		OutputFields: []int64{pk.GetFieldID(), field.GetFieldID()}, Strong: true,
	}})
	if err != nil {
		return nil, nil, err
	}
	byPK := map[any]int{}
	for i := 0; i < res.Rows; i++ {
		switch c := res.Fields[pk.GetFieldID()].(type) {
		case *column.Ints:
			byPK[c.Data[i]] = i
		case *column.Strings:
			byPK[c.Data[i]] = i
		}
	}
	rows := make([]int, 0, len(want))
	for _, w := range want {
		i, found := byPK[w]
		if !found {
			return nil, nil, errcode.Invalid("primary key %v to search by was not found", w)
		}
		rows = append(rows, i)
	}
	return res.Fields[field.GetFieldID()], rows, nil
}

// filterError words a filter that does not compile as Milvus's proxy does
// ("failed to create query plan: …: invalid parameter"), keeping the
// position Strata found the problem at.
func filterError(err error) error {
	var e *expr.Error
	if errors.As(err, &e) {
		msg := fmt.Sprintf("failed to create query plan: %s: invalid parameter[position=%d]", e.Reason(), e.Pos)
		if e.Detail != "" {
			msg += " (" + e.Detail + ")"
		}
		return &planError{err: errcode.New(errcode.IllegalArgument, "%s", msg), unknownFunction: e.UnknownFunction}
	}
	return errcode.InvalidParam("failed to create query plan: %v", err)
}

// planError is a filter error (an *errcode.Error) that remembers whether
// the filter calls an unknown function, which a query words as Milvus's
// query engine does.
type planError struct {
	err             *errcode.Error
	unknownFunction bool
}

// Error implements error.
func (e *planError) Error() string { return e.err.Error() }

// Unwrap lets errcode.CodeOf find the code.
func (e *planError) Unwrap() error { return e.err }

// retrieveError words a query's filter error as Milvus does: a call of an
// unknown function passes Milvus's parser and fails when the query engine
// creates the plan ("Create retrieve plan by expr failed: …").
func retrieveError(err error) error {
	var pe *planError
	if errors.As(err, &pe) && pe.unknownFunction {
		return errcode.New(errcode.IllegalArgument, "Create retrieve plan by expr failed: %s", pe.err.Msg)
	}
	return err
}

// readPartitionIDs resolves the partitions a search or query names, worded
// as Milvus words a missing one on its read path.
func readPartitionIDs(col *catalog.Collection, names []string) ([]int64, error) {
	for _, n := range names {
		if _, found := col.Partition(n); !found {
			return nil, errcode.New(errcode.PartitionNotFound, "partition name %s not found", n)
		}
	}
	return partitionIDs(col, names)
}

// checkCollectionID refuses a read whose "collection_id" parameter (set by
// pymilvus's iterators from the collection they started on) is not the
// collection the name resolves to now: an alias moved, or the collection was
// dropped and created again, between two batches.
func checkCollectionID(col *catalog.Collection, params []*commonpb.KeyValuePair) error {
	v, found := kvGet(params, "collection_id")
	if !found || v == "" {
		return nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return errcode.Invalid("collection_id %q is not an integer", v)
	}
	if id != col.ID {
		return errcode.Invalid("collection %s now has id %d, not %d: the alias or database may have been changed", col.Name, col.ID, id)
	}
	return nil
}
