package rest

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
)

type collectionReq struct {
	CollectionName string `json:"collectionName"`
}

func (c collectionReq) name() (string, error) {
	if c.CollectionName == "" {
		return "", missing("collectionName")
	}
	return c.CollectionName, nil
}

// decodeCollection decodes a body whose only required key is collectionName.
func decodeCollection(r *request) (string, error) {
	var c collectionReq
	if err := r.decode(&c); err != nil {
		return "", err
	}
	return c.name()
}

func (h *Handler) collectionRoutes() {
	h.add("collections/list", true, h.listCollections)
	h.add("collections/has", true, h.hasCollection)
	h.add("collections/describe", true, h.describeCollection)
	h.add("collections/get_stats", true, h.collectionStats)
	h.add("collections/get_load_state", true, h.loadState)
	h.add("collections/create", true, h.createCollection)
	h.add("collections/drop", true, h.dropCollection)
	h.add("collections/load", true, h.loadCollection)
	h.add("collections/release", true, h.releaseCollection)
	h.add("collections/flush", true, h.flushCollection)
	h.add("collections/rename", true, h.renameCollection)
}

func (h *Handler) listCollections(ctx context.Context, r *request) (any, error) {
	resp, err := h.svc.ShowCollections(ctx, &milvuspb.ShowCollectionsRequest{DbName: r.db})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return nonNil(resp.GetCollectionNames()), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (h *Handler) hasCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.HasCollection(ctx, &milvuspb.HasCollectionRequest{DbName: r.db, CollectionName: name})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return map[string]any{"has": resp.GetValue()}, nil
}

// describe fetches a collection's description (schema without `$meta`).
func (h *Handler) describe(ctx context.Context, db, name string) (*milvuspb.DescribeCollectionResponse, error) {
	resp, err := h.svc.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{DbName: db, CollectionName: name})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return resp, nil
}

func kvList(kvs []*commonpb.KeyValuePair) []map[string]string {
	out := make([]map[string]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, map[string]string{"key": kv.GetKey(), "value": kv.GetValue()})
	}
	return out
}

func (h *Handler) describeCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	coll, err := h.describe(ctx, r.db, name)
	if err != nil {
		return nil, err
	}
	schema := coll.GetSchema()
	autoID := false
	fields := make([]map[string]any, 0, len(schema.GetFields()))
	for _, f := range schema.GetFields() {
		if f.GetIsPrimaryKey() {
			autoID = f.GetAutoID()
		}
		fd := map[string]any{
			"name": f.GetName(), "id": f.GetFieldID(), "type": f.GetDataType().String(),
			"primaryKey": f.GetIsPrimaryKey(), "partitionKey": f.GetIsPartitionKey(),
			"clusteringKey": f.GetIsClusteringKey(), "autoId": f.GetAutoID(),
			"description": f.GetDescription(), "nullable": f.GetNullable(),
		}
		if len(f.GetTypeParams()) > 0 {
			fd["params"] = kvList(f.GetTypeParams())
		}
		if f.GetDataType() == schemapb.DataType_Array {
			fd["elementType"] = f.GetElementType().String()
		}
		if dv := f.GetDefaultValue(); dv != nil {
			fd["defaultValue"] = defaultValueJSON(dv)
		}
		fields = append(fields, fd)
	}
	indexes := []map[string]any{}
	if idx, err := h.svc.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{DbName: r.db, CollectionName: name}); check(idx, err) == nil {
		for _, d := range idx.GetIndexDescriptions() {
			indexes = append(indexes, map[string]any{
				"fieldName": d.GetFieldName(), "indexName": d.GetIndexName(),
				"metricType": kvValue(d.GetParams(), "metric_type"),
			})
		}
	}
	load := ""
	if st, err := h.svc.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{DbName: r.db, CollectionName: name}); check(st, err) == nil {
		load = st.GetState().String()
	}
	aliases := coll.GetAliases()
	if aliases == nil {
		aliases = []string{}
	}
	return map[string]any{
		"collectionName":     coll.GetCollectionName(),
		"collectionID":       coll.GetCollectionID(),
		"description":        schema.GetDescription(),
		"autoId":             autoID,
		"fields":             fields,
		"functions":          functionsJSON(schema),
		"aliases":            aliases,
		"indexes":            indexes,
		"load":               load,
		"shardsNum":          coll.GetShardsNum(),
		"partitionsNum":      coll.GetNumPartitions(),
		"consistencyLevel":   coll.GetConsistencyLevel().String(),
		"enableDynamicField": schema.GetEnableDynamicField(),
		"properties":         kvList(coll.GetProperties()),
		"createTime":         coll.GetCreatedTimestamp(),
	}, nil
}

func defaultValueJSON(v *schemapb.ValueField) any {
	switch d := v.GetData().(type) {
	case *schemapb.ValueField_BoolData:
		return d.BoolData
	case *schemapb.ValueField_IntData:
		return d.IntData
	case *schemapb.ValueField_LongData:
		return d.LongData
	case *schemapb.ValueField_FloatData:
		return d.FloatData
	case *schemapb.ValueField_DoubleData:
		return d.DoubleData
	case *schemapb.ValueField_StringData:
		return d.StringData
	}
	return nil
}

func kvValue(kvs []*commonpb.KeyValuePair, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return ""
}

func (h *Handler) collectionStats(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.GetCollectionStatistics(ctx, &milvuspb.GetCollectionStatisticsRequest{DbName: r.db, CollectionName: name})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	return rowCount(resp.GetStats()), nil
}

func rowCount(stats []*commonpb.KeyValuePair) map[string]any {
	n, _ := strconv.ParseInt(kvValue(stats, "row_count"), 10, 64)
	return map[string]any{"rowCount": n}
}

func (h *Handler) loadState(ctx context.Context, r *request) (any, error) {
	var req struct {
		collectionReq
		PartitionNames []string `json:"partitionNames"`
	}
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{DbName: r.db, CollectionName: name, PartitionNames: req.PartitionNames})
	if err := check(resp, err); err != nil {
		return nil, err
	}
	switch resp.GetState() {
	case commonpb.LoadState_LoadStateNotExist:
		return nil, errorf(100, "collection not found[collection=%s]", name)
	case commonpb.LoadState_LoadStateNotLoad:
		return map[string]any{"loadState": resp.GetState().String()}, nil
	}
	progress := int64(-1)
	pr, err := h.svc.GetLoadingProgress(ctx, &milvuspb.GetLoadingProgressRequest{DbName: r.db, CollectionName: name, PartitionNames: req.PartitionNames})
	if check(pr, err) == nil {
		progress = pr.GetProgress()
	}
	state := commonpb.LoadState_LoadStateLoading.String()
	if progress >= 100 {
		state = commonpb.LoadState_LoadStateLoaded.String()
	}
	return map[string]any{"loadState": state, "loadProgress": progress}, nil
}

func (h *Handler) dropCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.DropCollection(ctx, &milvuspb.DropCollectionRequest{DbName: r.db, CollectionName: name})
	return nil, check(resp, err)
}

func (h *Handler) loadCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{DbName: r.db, CollectionName: name})
	return nil, check(resp, err)
}

func (h *Handler) releaseCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.ReleaseCollection(ctx, &milvuspb.ReleaseCollectionRequest{DbName: r.db, CollectionName: name})
	return nil, check(resp, err)
}

func (h *Handler) flushCollection(ctx context.Context, r *request) (any, error) {
	name, err := decodeCollection(r)
	if err != nil {
		return nil, err
	}
	resp, err := h.svc.Flush(ctx, &milvuspb.FlushRequest{DbName: r.db, CollectionNames: []string{name}})
	return nil, check(resp, err)
}

func (h *Handler) renameCollection(ctx context.Context, r *request) (any, error) {
	var req struct {
		collectionReq
		NewCollectionName string `json:"newCollectionName"`
		NewDBName         string `json:"newDbName"`
	}
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	if req.NewCollectionName == "" {
		return nil, missing("newCollectionName")
	}
	resp, err := h.svc.RenameCollection(ctx, &milvuspb.RenameCollectionRequest{
		DbName: r.db, OldName: name,
		NewName: req.NewCollectionName, NewDBName: r.dbOf(req.NewDBName),
	})
	return nil, check(resp, err)
}

// fieldReq is one field of the schema form of collections/create.
type fieldReq struct {
	FieldName         string                     `json:"fieldName"`
	DataType          string                     `json:"dataType"`
	ElementDataType   string                     `json:"elementDataType"`
	IsPrimary         bool                       `json:"isPrimary"`
	IsPartitionKey    bool                       `json:"isPartitionKey"`
	IsClusteringKey   bool                       `json:"isClusteringKey"`
	Nullable          bool                       `json:"nullable"`
	DefaultValue      any                        `json:"defaultValue"`
	Description       string                     `json:"description"`
	ElementTypeParams map[string]json.RawMessage `json:"elementTypeParams"`
}

// functionReq is one entry of schema.functions (a BM25 function).
type functionReq struct {
	Name             string         `json:"name"`
	Type             string         `json:"type"`
	Description      string         `json:"description"`
	InputFieldNames  []string       `json:"inputFieldNames"`
	OutputFieldNames []string       `json:"outputFieldNames"`
	Params           map[string]any `json:"params"`
}

// indexReq is one entry of indexParams.
type indexReq struct {
	FieldName  string         `json:"fieldName"`
	IndexName  string         `json:"indexName"`
	MetricType string         `json:"metricType"`
	IndexType  string         `json:"indexType"`
	Params     map[string]any `json:"params"`
}

type createCollectionReq struct {
	collectionReq
	Dimension        json.Number `json:"dimension"`
	IDType           string      `json:"idType"`
	AutoID           bool        `json:"autoID"`
	MetricType       string      `json:"metricType"`
	PrimaryFieldName string      `json:"primaryFieldName"`
	VectorFieldName  string      `json:"vectorFieldName"`
	Description      string      `json:"description"`
	Schema           *struct {
		AutoID             bool          `json:"autoId"`
		EnableDynamicField *bool         `json:"enableDynamicField"`
		Fields             []fieldReq    `json:"fields"`
		Functions          []functionReq `json:"functions"`
	} `json:"schema"`
	IndexParams []indexReq     `json:"indexParams"`
	Params      map[string]any `json:"params"`
}

// parseDataType accepts the Milvus type names ("Int64", "FloatVector", …),
// case-insensitively.
func parseDataType(s string) (schemapb.DataType, bool) {
	if v, ok := schemapb.DataType_value[s]; ok {
		return schemapb.DataType(v), true
	}
	for name, v := range schemapb.DataType_value {
		if strings.EqualFold(name, s) {
			return schemapb.DataType(v), true
		}
	}
	return schemapb.DataType_None, false
}

// paramString renders a JSON param value as the string gRPC carries.
func paramString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func (h *Handler) createCollection(ctx context.Context, r *request) (any, error) {
	var req createCollectionReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	name, err := req.name()
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	for k, v := range req.Params {
		params[k] = paramString(v)
	}
	var schema *schemapb.CollectionSchema
	indexes := req.IndexParams
	quick := req.Schema == nil
	if quick {
		if req.Dimension == "" {
			return nil, missing("dimension")
		}
		schema, indexes, err = quickSchema(name, &req, params)
	} else {
		schema, err = schemaFromRequest(name, &req)
	}
	if err != nil {
		return nil, err
	}
	raw, err := proto.Marshal(schema)
	if err != nil {
		return nil, errorf(errcode.Unexpected, "encode schema: %v", err)
	}
	cr := &milvuspb.CreateCollectionRequest{
		DbName: r.db, CollectionName: name, Schema: raw, ShardsNum: 1,
		ConsistencyLevel: commonpb.ConsistencyLevel_Bounded,
	}
	if v := params["shardsNum"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, errorf(errcode.IllegalArgument, "shardsNum %q is not an integer", v)
		}
		cr.ShardsNum = int32(n)
	}
	if v := params["consistencyLevel"]; v != "" {
		lvl, ok := commonpb.ConsistencyLevel_value[v]
		if !ok {
			return nil, errorf(errcode.IllegalArgument, "consistencyLevel %q is not one of Strong, Session, Bounded, Eventually", v)
		}
		cr.ConsistencyLevel = commonpb.ConsistencyLevel(lvl)
	}
	if v := params["partitionsNum"]; v != "" {
		n, _ := strconv.ParseInt(v, 10, 64)
		cr.NumPartitions = n
	}
	if v := params["ttlSeconds"]; v != "" {
		cr.Properties = append(cr.Properties, &commonpb.KeyValuePair{Key: "collection.ttl.seconds", Value: v})
	}
	resp, err := h.svc.CreateCollection(ctx, cr)
	if err := check(resp, err); err != nil {
		return nil, err
	}
	if len(indexes) == 0 {
		return nil, nil
	}
	for _, idx := range indexes {
		if err := h.createIndex(ctx, r.db, name, idx); err != nil {
			return nil, err
		}
	}
	lr, err := h.svc.LoadCollection(ctx, &milvuspb.LoadCollectionRequest{DbName: r.db, CollectionName: name})
	return nil, check(lr, err)
}

// quickSchema builds the schema of the quick form: a primary key and one
// float vector field, dynamic fields on; it returns the index to create.
func quickSchema(name string, req *createCollectionReq, params map[string]string) (*schemapb.CollectionSchema, []indexReq, error) {
	dim, err := strconv.ParseInt(req.Dimension.String(), 10, 64)
	if err != nil || dim <= 0 {
		return nil, nil, errorf(errcode.IllegalArgument, "dimension %q should be a positive integer", req.Dimension.String())
	}
	pkName, vecName := req.PrimaryFieldName, req.VectorFieldName
	if pkName == "" {
		pkName = "id"
	}
	if vecName == "" {
		vecName = "vector"
	}
	pk := &schemapb.FieldSchema{Name: pkName, IsPrimaryKey: true, AutoID: req.AutoID, DataType: schemapb.DataType_Int64}
	switch strings.ToLower(req.IDType) {
	case "", "int64":
	case "varchar", "string":
		pk.DataType = schemapb.DataType_VarChar
		maxLen := params["max_length"]
		if maxLen == "" {
			maxLen = "65535"
		}
		pk.TypeParams = []*commonpb.KeyValuePair{{Key: "max_length", Value: maxLen}}
	default:
		return nil, nil, errorf(errcode.IllegalArgument, "idType %q should be Int64 or VarChar", req.IDType)
	}
	dynamic := true
	if v, ok := params["enableDynamicField"]; ok {
		dynamic, _ = strconv.ParseBool(v)
	}
	schema := &schemapb.CollectionSchema{
		Name: name, Description: req.Description, AutoID: req.AutoID,
		EnableDynamicField: dynamic, Fields: []*schemapb.FieldSchema{pk, {
			Name: vecName, DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: strconv.FormatInt(dim, 10)}},
		}},
	}
	metric := req.MetricType
	if metric == "" {
		metric = "COSINE"
	}
	return schema, []indexReq{{FieldName: vecName, IndexName: vecName, MetricType: metric, IndexType: "AUTOINDEX"}}, nil
}

func schemaFromRequest(name string, req *createCollectionReq) (*schemapb.CollectionSchema, error) {
	in := req.Schema
	dynamic := in.EnableDynamicField != nil && *in.EnableDynamicField
	schema := &schemapb.CollectionSchema{Name: name, Description: req.Description, AutoID: in.AutoID, EnableDynamicField: dynamic}
	for _, f := range in.Fields {
		if f.FieldName == "" {
			return nil, missing("schema.fields.fieldName")
		}
		dt, ok := parseDataType(f.DataType)
		if !ok {
			return nil, errorf(errcode.IllegalArgument, "field %s: unknown dataType %q", f.FieldName, f.DataType)
		}
		fs := &schemapb.FieldSchema{
			Name: f.FieldName, DataType: dt, IsPrimaryKey: f.IsPrimary,
			IsPartitionKey: f.IsPartitionKey, IsClusteringKey: f.IsClusteringKey, Nullable: f.Nullable,
			Description: f.Description,
		}
		if f.IsPrimary {
			fs.AutoID = in.AutoID
		}
		if dt == schemapb.DataType_Array {
			et, ok := parseDataType(f.ElementDataType)
			if !ok {
				return nil, errorf(errcode.IllegalArgument, "field %s: unknown elementDataType %q", f.FieldName, f.ElementDataType)
			}
			fs.ElementType = et
		}
		for k, raw := range f.ElementTypeParams {
			var v any
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				return nil, errorf(errcode.IncorrectParameterFormat, "field %s: elementTypeParams.%s: %v", f.FieldName, k, err)
			}
			fs.TypeParams = append(fs.TypeParams, &commonpb.KeyValuePair{Key: k, Value: paramString(v)})
		}
		if f.DefaultValue != nil {
			dv, err := defaultValue(dt, f.DefaultValue)
			if err != nil {
				return nil, errorf(errcode.IllegalArgument, "field %s: %v", f.FieldName, err)
			}
			fs.DefaultValue = dv
		}
		schema.Fields = append(schema.Fields, fs)
	}
	for _, fn := range in.Functions {
		t, ok := schemapb.FunctionType_value[fn.Type]
		if !ok {
			for name, v := range schemapb.FunctionType_value {
				if strings.EqualFold(name, fn.Type) {
					t, ok = v, true
				}
			}
		}
		if !ok {
			return nil, errorf(errcode.IllegalArgument, "function %s: unknown type %q", fn.Name, fn.Type)
		}
		fs := &schemapb.FunctionSchema{
			Name: fn.Name, Type: schemapb.FunctionType(t), Description: fn.Description,
			InputFieldNames: fn.InputFieldNames, OutputFieldNames: fn.OutputFieldNames,
		}
		keys := make([]string, 0, len(fn.Params))
		for k := range fn.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fs.Params = append(fs.Params, &commonpb.KeyValuePair{Key: k, Value: paramString(fn.Params[k])})
		}
		schema.Functions = append(schema.Functions, fs)
	}
	return schema, nil
}

// functionsJSON renders a schema's functions as Milvus REST describes them.
func functionsJSON(schema *schemapb.CollectionSchema) []any {
	out := []any{}
	for _, fn := range schema.GetFunctions() {
		params := map[string]any{}
		for _, kv := range fn.GetParams() {
			params[kv.GetKey()] = kv.GetValue()
		}
		out = append(out, map[string]any{
			"name": fn.GetName(), "id": fn.GetId(), "type": fn.GetType().String(), "description": fn.GetDescription(),
			"inputFieldNames": fn.GetInputFieldNames(), "outputFieldNames": fn.GetOutputFieldNames(), "params": params,
		})
	}
	return out
}

func defaultValue(dt schemapb.DataType, v any) (*schemapb.ValueField, error) {
	s := paramString(v)
	bad := func() (*schemapb.ValueField, error) {
		return nil, errorf(errcode.IllegalArgument, "defaultValue %v does not match type %s", v, dt)
	}
	switch dt {
	case schemapb.DataType_Bool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_BoolData{BoolData: b}}, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_IntData{IntData: int32(n)}}, nil
	case schemapb.DataType_Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_LongData{LongData: n}}, nil
	case schemapb.DataType_Float:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_FloatData{FloatData: float32(f)}}, nil
	case schemapb.DataType_Double:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_DoubleData{DoubleData: f}}, nil
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		return &schemapb.ValueField{Data: &schemapb.ValueField_StringData{StringData: str}}, nil
	}
	return nil, errorf(errcode.IllegalArgument, "fields of type %s cannot have a default value", dt)
}
