package rest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

func (h *Handler) entityRoutes() {
	h.add("entities/insert", true, func(ctx context.Context, r *request) (any, error) { return h.write(ctx, r, false) })
	h.add("entities/upsert", true, func(ctx context.Context, r *request) (any, error) { return h.write(ctx, r, true) })
	h.add("entities/delete", true, h.delete)
	h.add("entities/query", true, h.query)
	h.add("entities/get", true, h.get)
	h.add("entities/search", true, h.search)
	h.add("entities/hybrid_search", true, h.hybridSearch)
	h.add("entities/advanced_search", true, h.hybridSearch)
}

type writeReq struct {
	collectionReq
	PartitionName string          `json:"partitionName"`
	Data          json.RawMessage `json:"data"`
	// PartialUpdate and FieldOps make an upsert merge with the stored rows.
	PartialUpdate bool         `json:"partialUpdate"`
	FieldOps      []fieldOpReq `json:"fieldOps"`
}

// parseRows accepts `data` as an array of objects or a single object.
func parseRows(raw json.RawMessage) ([]map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, missing("data")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf(errcode.InvalidInsertData, "data: %v", err)
	}
	var list []any
	switch x := v.(type) {
	case []any:
		list = x
	case map[string]any:
		list = []any{x}
	default:
		return nil, errorf(errcode.InvalidInsertData, "data should be an array of objects")
	}
	if len(list) == 0 {
		return nil, errorf(errcode.InvalidInsertData, "data is empty")
	}
	rows := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, errorf(errcode.InvalidInsertData, "data[%d] is not an object", i)
		}
		rows[i] = m
	}
	return rows, nil
}

func idList(ids *schemapb.IDs, allowInt64 bool) any {
	if s := ids.GetStrId(); s != nil {
		return nonNil(s.GetData())
	}
	out := make([]any, 0, len(ids.GetIntId().GetData()))
	for _, v := range ids.GetIntId().GetData() {
		out = append(out, int64Value(v, allowInt64))
	}
	return out
}

func (h *Handler) write(ctx context.Context, r *request, upsert bool) (any, error) {
	var req writeReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	rows, err := parseRows(req.Data)
	if err != nil {
		return nil, err
	}
	coll, err := h.describe(ctx, r.db, name)
	if err != nil {
		return nil, err
	}
	ops, err := fieldOps(req.FieldOps)
	if err != nil {
		return nil, err
	}
	partial := upsert && (req.PartialUpdate || len(ops) > 0)
	schema := coll.GetSchema()
	if partial {
		schema = sentSchema(schema, rows)
	}
	cols, err := rowsToColumns(schema, rows)
	if err != nil {
		return nil, err
	}
	if upsert {
		resp, err := h.svc.Upsert(ctx, &milvuspb.UpsertRequest{
			DbName: r.db, CollectionName: name,
			PartitionName: req.PartitionName, FieldsData: cols, NumRows: uint32(len(rows)),
			SchemaTimestamp: coll.GetUpdateTimestamp(), PartialUpdate: partial, FieldOps: ops,
		})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return map[string]any{"upsertCount": resp.GetUpsertCnt(), "upsertIds": idList(resp.GetIDs(), r.allowInt64)}, nil
	}
	resp, err := h.svc.Insert(ctx, &milvuspb.InsertRequest{
		DbName: r.db, CollectionName: name,
		PartitionName: req.PartitionName, FieldsData: cols, NumRows: uint32(len(rows)),
		SchemaTimestamp: coll.GetUpdateTimestamp(),
	})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return map[string]any{"insertCount": resp.GetInsertCnt(), "insertIds": idList(resp.GetIDs(), r.allowInt64)}, nil
}

// primaryKeys parses an `id` or `ids` value (one key or a list) as keys of
// the collection's primary key; exactly one of ints and strs is filled.
func primaryKeys(schema *schemapb.CollectionSchema, param string, raw json.RawMessage) (*schemapb.FieldSchema, []int64, []string, error) {
	var pk *schemapb.FieldSchema
	for _, f := range schema.GetFields() {
		if f.GetIsPrimaryKey() {
			pk = f
		}
	}
	if pk == nil {
		return nil, nil, nil, errorf(errcode.CheckPrimaryKey, "the collection has no primary key")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, nil, errorf(errcode.CheckPrimaryKey, "%s: %v", param, err)
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	if len(list) == 0 {
		return nil, nil, nil, errorf(errcode.CheckPrimaryKey, "%s is empty", param)
	}
	var ints []int64
	var strs []string
	for _, x := range list {
		if pk.GetDataType() == schemapb.DataType_Int64 {
			n, err := toInt(x, 64)
			if err != nil {
				return nil, nil, nil, errorf(errcode.CheckPrimaryKey, "%s: %v", param, err)
			}
			ints = append(ints, n)
			continue
		}
		s, ok := x.(string)
		if !ok {
			return nil, nil, nil, errorf(errcode.CheckPrimaryKey, "%s: %v is not a string", param, x)
		}
		strs = append(strs, s)
	}
	return pk, ints, strs, nil
}

// pkFilter builds `pk in [...]` from an `id` value (one key or a list).
func pkFilter(schema *schemapb.CollectionSchema, raw json.RawMessage) (string, error) {
	pk, ints, strs, err := primaryKeys(schema, "id", raw)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(ints)+len(strs))
	for _, n := range ints {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	for _, s := range strs {
		b, _ := json.Marshal(s)
		parts = append(parts, string(b))
	}
	return fmt.Sprintf("%s in [%s]", pk.GetName(), strings.Join(parts, ",")), nil
}

func hasID(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func (h *Handler) delete(ctx context.Context, r *request) (any, error) {
	var req struct {
		collectionReq
		Filter        string                     `json:"filter"`
		ID            json.RawMessage            `json:"id"`
		PartitionName string                     `json:"partitionName"`
		ExprParams    map[string]json.RawMessage `json:"exprParams"`
	}
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	filter := req.Filter
	if filter == "" {
		if !hasID(req.ID) {
			return nil, missing("filter")
		}
		coll, err := h.describe(ctx, r.db, name)
		if err != nil {
			return nil, err
		}
		if filter, err = pkFilter(coll.GetSchema(), req.ID); err != nil {
			return nil, err
		}
	}
	tmpl, err := templates(req.ExprParams)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.Delete(ctx, &milvuspb.DeleteRequest{
		DbName: r.db, CollectionName: name,
		PartitionName: req.PartitionName, Expr: filter, ExprTemplateValues: tmpl,
	})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return map[string]any{"deleteCount": resp.GetDeleteCnt()}, nil
}

type readReq struct {
	collectionReq
	Filter           string                     `json:"filter"`
	OutputFields     []string                   `json:"outputFields"`
	PartitionNames   []string                   `json:"partitionNames"`
	Limit            *int                       `json:"limit"`
	Offset           int                        `json:"offset"`
	ConsistencyLevel string                     `json:"consistencyLevel"`
	ExprParams       map[string]json.RawMessage `json:"exprParams"`
}

func consistency(s string) (commonpb.ConsistencyLevel, bool, error) {
	if s == "" {
		return commonpb.ConsistencyLevel_Bounded, true, nil
	}
	v, ok := commonpb.ConsistencyLevel_value[s]
	if !ok {
		return 0, false, errorf(errcode.IllegalArgument, "consistencyLevel %q is not one of Strong, Session, Bounded, Eventually", s)
	}
	return commonpb.ConsistencyLevel(v), false, nil
}

func (h *Handler) runQuery(ctx context.Context, r *request, name string, req *readReq, filter string, withLimit bool) (any, error) {
	out := req.OutputFields
	if len(out) == 0 {
		out = []string{"*"}
	}
	level, useDefault, err := consistency(req.ConsistencyLevel)
	if err != nil {
		return nil, err
	}
	tmpl, err := templates(req.ExprParams)
	if err != nil {
		return nil, err
	}
	q := &milvuspb.QueryRequest{
		DbName: r.db, CollectionName: name, Expr: filter, OutputFields: out,
		PartitionNames: req.PartitionNames, ConsistencyLevel: level, UseDefaultConsistency: useDefault,
		ExprTemplateValues: tmpl,
	}
	count := len(out) == 1 && strings.EqualFold(strings.TrimSpace(out[0]), "count(*)")
	if withLimit && !count {
		limit := 100
		if req.Limit != nil {
			limit = *req.Limit
		}
		if limit > 0 {
			q.QueryParams = append(q.QueryParams, &commonpb.KeyValuePair{Key: "limit", Value: strconv.Itoa(limit)})
		}
		if req.Offset > 0 {
			q.QueryParams = append(q.QueryParams, &commonpb.KeyValuePair{Key: "offset", Value: strconv.Itoa(req.Offset)})
		}
	}
	resp, err := h.svc.Query(ctx, q)
	if err := check(resp, err); err != nil {
		return nil, err
	}
	n := 0
	if len(resp.GetFieldsData()) > 0 {
		n = fieldLen(resp.GetFieldsData()[0])
	}
	rows, err := columnsToRows(resp.GetFieldsData(), n, r.allowInt64)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// fieldLen is the number of rows in a column.
func fieldLen(c *schemapb.FieldData) int {
	if v := c.GetValidData(); len(v) > 0 {
		return len(v) // nullable vectors carry only their non-null rows
	}
	if s := c.GetScalars(); s != nil {
		return column.ScalarLen(s)
	}
	v := c.GetVectors()
	if sv := v.GetSparseFloatVector(); sv != nil {
		return len(sv.GetContents())
	}
	dim := int(v.GetDim())
	if dim == 0 {
		return 0
	}
	switch d := v.GetData().(type) {
	case *schemapb.VectorField_FloatVector:
		return len(d.FloatVector.GetData()) / dim
	case *schemapb.VectorField_BinaryVector:
		return len(d.BinaryVector) / (dim / 8)
	case *schemapb.VectorField_Float16Vector:
		return len(d.Float16Vector) / (2 * dim)
	case *schemapb.VectorField_Bfloat16Vector:
		return len(d.Bfloat16Vector) / (2 * dim)
	}
	return 0
}

func (h *Handler) query(ctx context.Context, r *request) (any, error) {
	var req readReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	return h.runQuery(ctx, r, name, &req, req.Filter, true)
}

func (h *Handler) get(ctx context.Context, r *request) (any, error) {
	var req struct {
		readReq
		ID json.RawMessage `json:"id"`
	}
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	if !hasID(req.ID) {
		return nil, missing("id")
	}
	coll, err := h.describe(ctx, r.db, name)
	if err != nil {
		return nil, err
	}
	filter, err := pkFilter(coll.GetSchema(), req.ID)
	if err != nil {
		return nil, err
	}
	return h.runQuery(ctx, r, name, &req.readReq, filter, false)
}

// searchRows flattens search results: one row per hit holding the primary
// key, the output fields and "distance"; "topks" tells how many rows belong
// to each query vector.
func searchRows(res *schemapb.SearchResultData, allowInt64 bool) (any, error) {
	topks := res.GetTopks()
	total := 0
	for _, k := range topks {
		total += int(k)
	}
	rows, err := columnsToRows(res.GetFieldsData(), total, allowInt64)
	if err != nil {
		return nil, err
	}
	pkName := res.GetPrimaryFieldName()
	if pkName == "" {
		pkName = "id"
	}
	ints, strs := res.GetIds().GetIntId().GetData(), res.GetIds().GetStrId().GetData()
	scores := res.GetScores()
	if len(scores) < total || (len(ints) < total && len(strs) < total) {
		return nil, errorf(errcode.InvalidSearchResult, "search result has %d hits but %d scores", total, len(scores))
	}
	for i := range rows {
		if len(strs) >= total && len(ints) < total {
			rows[i][pkName] = strs[i]
		} else {
			rows[i][pkName] = int64Value(ints[i], allowInt64)
		}
		rows[i]["distance"] = finite(float64(scores[i]))
	}
	if topks == nil {
		topks = []int64{}
	}
	return envelope{"data": rows, "topks": topks}, nil
}

// vectorField picks the field to search: the named one, or the only vector field.
func vectorField(schema *schemapb.CollectionSchema, name string) (*schemapb.FieldSchema, error) {
	var found []*schemapb.FieldSchema
	for _, f := range schema.GetFields() {
		if name != "" && f.GetName() == name {
			return f, nil
		}
		switch f.GetDataType() {
		case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
			schemapb.DataType_BFloat16Vector, schemapb.DataType_SparseFloatVector, schemapb.DataType_Int8Vector:
			found = append(found, f)
		}
	}
	if name != "" {
		return nil, errorf(errcode.IllegalArgument, "annsField %q is not a field of the collection", name)
	}
	if len(found) != 1 {
		return nil, errorf(errcode.MissingRequiredParameter, "annsField is required: the collection has %d vector fields", len(found))
	}
	return found[0], nil
}

// placeholders serializes the query vectors as a PlaceholderGroup.
func placeholders(field *schemapb.FieldSchema, data []json.RawMessage) ([]byte, error) {
	ph := &commonpb.PlaceholderValue{Tag: "$0"}
	if t := field.GetDataType(); t != schemapb.DataType_FloatVector && t != schemapb.DataType_SparseFloatVector {
		var err error
		if ph, err = bytePlaceholder(field, data); err != nil {
			return nil, err
		}
		data = nil
	}
	for i, raw := range data {
		if field.GetDataType() == schemapb.DataType_SparseFloatVector {
			if t := strings.TrimSpace(string(raw)); strings.HasPrefix(t, `"`) {
				// A query text: a full-text search of a BM25 output field.
				var text string
				if err := json.Unmarshal([]byte(t), &text); err != nil {
					return nil, errorf(errcode.IncorrectParameterFormat, "data[%d] is not a string: %v", i, err)
				}
				if ph.Type != commonpb.PlaceholderType_None && ph.Type != commonpb.PlaceholderType_VarChar {
					return nil, errorf(errcode.IncorrectParameterFormat, "data[%d] is a text, the others are sparse vectors", i)
				}
				ph.Type = commonpb.PlaceholderType_VarChar
				ph.Values = append(ph.Values, []byte(text))
				continue
			}
			if ph.Type == commonpb.PlaceholderType_VarChar {
				return nil, errorf(errcode.IncorrectParameterFormat, "data[%d] is a sparse vector, the others are texts", i)
			}
			if err := sparsePlaceholder(ph, i, raw); err != nil {
				return nil, err
			}
			continue
		}
		var vec []json.Number
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&vec); err != nil {
			return nil, errorf(errcode.IncorrectParameterFormat, "data[%d] is not an array of numbers: %v", i, err)
		}
		switch field.GetDataType() {
		case schemapb.DataType_FloatVector:
			ph.Type = commonpb.PlaceholderType_FloatVector
			b := make([]byte, 4*len(vec))
			for j, x := range vec {
				f, err := x.Float64()
				if err != nil {
					return nil, errorf(errcode.IncorrectParameterFormat, "data[%d][%d]: %v", i, j, err)
				}
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(float32(f)))
			}
			ph.Values = append(ph.Values, b)
		default:
			return nil, errorf(errcode.IllegalArgument, "searching %s fields through REST is not supported yet", field.GetDataType())
		}
	}
	b, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{ph}})
	if err != nil {
		return nil, errorf(errcode.Unexpected, "encode placeholders: %v", err)
	}
	return b, nil
}

// templates converts exprParams into expression template values.
func templates(in map[string]json.RawMessage) (map[string]*schemapb.TemplateValue, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := map[string]*schemapb.TemplateValue{}
	for k, raw := range in {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, errorf(errcode.IncorrectParameterFormat, "exprParams.%s: %v", k, err)
		}
		tv, err := templateValue(v)
		if err != nil {
			return nil, errorf(errcode.IllegalArgument, "exprParams.%s: %v", k, err)
		}
		out[k] = tv
	}
	return out, nil
}

func templateValue(v any) (*schemapb.TemplateValue, error) {
	switch x := v.(type) {
	case bool:
		return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_BoolVal{BoolVal: x}}, nil
	case string:
		return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_StringVal{StringVal: x}}, nil
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_Int64Val{Int64Val: n}}, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_FloatVal{FloatVal: f}}, nil
	case []any:
		arr := &schemapb.TemplateArrayValue{}
		if err := fillTemplateArray(arr, x); err != nil {
			return nil, err
		}
		return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: arr}}, nil
	}
	return nil, fmt.Errorf("unsupported value %v", v)
}

// fillTemplateArray fills a homogeneous array; mixed ints and floats become doubles.
func fillTemplateArray(arr *schemapb.TemplateArrayValue, list []any) error {
	var bools []bool
	var longs []int64
	var doubles []float64
	var strs []string
	var arrays []*schemapb.TemplateArrayValue
	allInt := true
	for _, e := range list {
		switch x := e.(type) {
		case bool:
			bools = append(bools, x)
		case string:
			strs = append(strs, x)
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return err
			}
			doubles = append(doubles, f)
			n, err := strconv.ParseInt(x.String(), 10, 64)
			if err != nil {
				allInt = false
			}
			longs = append(longs, n)
		case []any:
			sub := &schemapb.TemplateArrayValue{}
			if err := fillTemplateArray(sub, x); err != nil {
				return err
			}
			arrays = append(arrays, sub)
		default:
			return fmt.Errorf("unsupported array element %v", e)
		}
	}
	switch {
	case len(bools) == len(list) && len(list) > 0:
		arr.Data = &schemapb.TemplateArrayValue_BoolData{BoolData: &schemapb.BoolArray{Data: bools}}
	case len(strs) == len(list) && len(list) > 0:
		arr.Data = &schemapb.TemplateArrayValue_StringData{StringData: &schemapb.StringArray{Data: strs}}
	case len(doubles) == len(list) && len(list) > 0 && allInt:
		arr.Data = &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{Data: longs}}
	case len(doubles) == len(list) && len(list) > 0:
		arr.Data = &schemapb.TemplateArrayValue_DoubleData{DoubleData: &schemapb.DoubleArray{Data: doubles}}
	case len(arrays) == len(list) && len(list) > 0:
		arr.Data = &schemapb.TemplateArrayValue_ArrayData{ArrayData: &schemapb.TemplateArrayValueArray{Data: arrays}}
	case len(list) == 0:
		arr.Data = &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{}}
	default:
		return fmt.Errorf("array elements must all have one type")
	}
	return nil
}
