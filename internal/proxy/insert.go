package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// MaxJSONBytes is the largest JSON value a row may hold.
const MaxJSONBytes = 65536

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rows is a validated batch: one column per stored user field, keyed by ID.
type rows struct {
	n    int
	cols map[int64]column.Column
	pk   column.Column
	// ts is each row's own timestamp (a backup import's, kept from its
	// binlogs); nil for rows written at the write's timestamp.
	ts *column.Ints
}

// validateRows turns request columns into stored columns, checking every
// value; autoID primary keys are generated from firstID when firstID ≥ 0.
func validateRows(col *catalog.Collection, fds []*schemapb.FieldData, numRows uint32, genPK func(n int) ([]int64, error), requirePK bool) (*rows, error) {
	out, err := validateGiven(col, fds, numRows, requirePK)
	if err != nil {
		return nil, err
	}
	if err := fillMissing(col, out, genPK, requirePK); err != nil {
		return nil, err
	}
	if err := runFunctions(col, out); err != nil {
		return nil, err
	}
	return out, nil
}

// validateGiven turns the request columns that were sent into stored
// columns, checking every value; fields not sent are left out of the result
// (out.pk is nil when the primary key was not sent).
func validateGiven(col *catalog.Collection, fds []*schemapb.FieldData, numRows uint32, requirePK bool) (*rows, error) {
	fds, err := flattenStructs(col, fds)
	if err != nil {
		return nil, err
	}
	byName := map[string]*schemapb.FieldData{}
	var dyn *schemapb.FieldData
	dynField := col.DynamicField()
	n := -1
	for _, fd := range fds {
		if fd.GetIsDynamic() || (dynField != nil && fd.GetFieldName() == dynField.GetName()) {
			if dynField == nil {
				return nil, errcode.Invalid("the collection does not enable the dynamic field, but dynamic data was sent")
			}
			dyn = fd
			continue
		}
		f := col.Field(fd.GetFieldName())
		if f == nil || f.GetFieldID() < 100 {
			return nil, errcode.Invalid("field %q does not exist in collection %q", fd.GetFieldName(), col.Name)
		}
		if byName[fd.GetFieldName()] != nil {
			return nil, errcode.Invalid("field %q is sent more than once", fd.GetFieldName())
		}
		byName[fd.GetFieldName()] = fd
	}
	out := &rows{cols: map[int64]column.Column{}}
	setN := func(name string, m int) error {
		if n < 0 {
			n = m
			return nil
		}
		if m != n {
			return errcode.Invalid("the number of rows of field %q is %d, other fields have %d", name, m, n)
		}
		return nil
	}
	if numRows > 0 {
		n = int(numRows)
	}
	outputs := functionOutputs(col)
	for _, f := range col.Schema.GetFields() {
		if f.GetFieldID() < 100 || f.GetIsDynamic() {
			continue
		}
		fd := byName[f.GetName()]
		if outputs[f.GetFieldID()] {
			if fd != nil {
				return nil, functionOutputSent(f)
			}
			continue // runFunctions computes it
		}
		if f.GetIsPrimaryKey() && f.GetAutoID() && !requirePK && (fd == nil || !allowInsertAutoID(col)) {
			if fd != nil {
				return nil, errcode.Invalid("more fieldData has pass in: the primary key field %q is auto-generated, no need to provide it", f.GetName())
			}
			continue
		}
		if fd == nil {
			continue // filled below once n is known
		}
		if fd.GetType() != schemapb.DataType_None && fd.GetType() != f.GetDataType() {
			return nil, errcode.Invalid("field %q: data type %s does not match the schema type %s", f.GetName(), fd.GetType(), f.GetDataType())
		}
		if len(fd.GetValidData()) > 0 && !f.GetNullable() && f.GetDefaultValue() == nil {
			for _, v := range fd.GetValidData() {
				if !v {
					return nil, errcode.Invalid("field %q is not nullable but null values were sent", f.GetName())
				}
			}
		}
		if v := fd.GetVectors(); v != nil && isVectorType(f.GetDataType()) && f.GetDataType() != schemapb.DataType_SparseFloatVector {
			dim, _ := column.Dim(f)
			if v.GetDim() != 0 && int(v.GetDim()) != dim {
				return nil, errcode.Invalid("the length(%d) of %s data should divide the dim(%d): the dim (%d) of field data(%s) is not equal to schema dim (%d)",
					vectorDataLen(v), vectorKind(f.GetDataType()), dim, v.GetDim(), f.GetName(), dim)
			}
		}
		if err := vectorPayloadMissing(f, fd); err != nil {
			return nil, err
		}
		if err := timestamptzIn(col, f, fd); err != nil {
			return nil, err
		}
		c, err := column.FromFieldData(f, fd)
		if err != nil {
			return nil, errcode.Invalid("%v", err)
		}
		if err := setN(f.GetName(), c.Len()); err != nil {
			return nil, err
		}
		if err := checkValues(f, c); err != nil {
			return nil, err
		}
		c, err = fillDefaults(f, c)
		if err != nil {
			return nil, err
		}
		out.cols[f.GetFieldID()] = c
	}
	if dyn != nil {
		c := &column.JSONs{Data: dyn.GetScalars().GetJsonData().GetData()}
		if dyn.GetScalars().GetJsonData() == nil {
			return nil, errcode.Invalid("the dynamic field data must be JSON")
		}
		if err := setN(dynField.GetName(), c.Len()); err != nil {
			return nil, err
		}
		for i, b := range c.Data {
			if err := checkDynamicRow(col, b); err != nil {
				return nil, errcode.Invalid("row %d: %v", i, err)
			}
		}
		out.cols[dynField.GetFieldID()] = c
	}
	if n < 0 {
		return nil, errcode.Invalid("no data was sent")
	}
	if n == 0 {
		return nil, errcode.Invalid("the number of rows is 0")
	}
	out.n = n
	out.pk = out.cols[col.PKField().GetFieldID()]
	return out, nil
}

// fillMissing adds the fields a validated batch did not send: an empty
// dynamic object, generated auto-ID keys, nulls or the default value; any
// other missing field is an error.
func fillMissing(col *catalog.Collection, out *rows, genPK func(n int) ([]int64, error), requirePK bool) error {
	n := out.n
	outputs := functionOutputs(col)
	for _, f := range col.Schema.GetFields() {
		if f.GetFieldID() < 100 || out.cols[f.GetFieldID()] != nil || outputs[f.GetFieldID()] {
			continue
		}
		switch {
		case f.GetIsDynamic():
			d := make([][]byte, n)
			for i := range d {
				d[i] = []byte("{}")
			}
			out.cols[f.GetFieldID()] = &column.JSONs{Data: d}
		case f.GetIsPrimaryKey() && f.GetAutoID() && !requirePK:
			c, err := autoIDs(f, n, genPK)
			if err != nil {
				return err
			}
			out.cols[f.GetFieldID()] = c
		case f.GetNullable() || f.GetDefaultValue() != nil:
			filled, err := column.Fill(f, n)
			if err != nil {
				return err
			}
			out.cols[f.GetFieldID()] = filled
		default:
			return errcode.Invalid("field %q is not passed and has no default value", f.GetName())
		}
	}
	out.pk = out.cols[col.PKField().GetFieldID()]
	return nil
}

// autoIDs generates n primary keys for the auto-ID field f: the allocated
// int64 IDs, or, for a VarChar key, the same IDs as decimal text (as Milvus
// does). The generated keys pass the same value checks as sent ones.
func autoIDs(f *schemapb.FieldSchema, n int, genPK func(n int) ([]int64, error)) (column.Column, error) {
	ids, err := genPK(n)
	if err != nil {
		return nil, err
	}
	var c column.Column
	switch f.GetDataType() {
	case schemapb.DataType_Int64:
		c = &column.Ints{T: schemapb.DataType_Int64, Data: ids}
	case schemapb.DataType_VarChar:
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.FormatInt(id, 10)
		}
		c = &column.Strings{T: schemapb.DataType_VarChar, Data: s}
	default:
		return nil, errcode.Invalid("the primary key field %q of type %s cannot be auto-generated", f.GetName(), f.GetDataType())
	}
	if err := checkValues(f, c); err != nil {
		return nil, err
	}
	return c, nil
}

// fillDefaults replaces nulls with the field's default value, if it has one.
func fillDefaults(f *schemapb.FieldSchema, c column.Column) (column.Column, error) {
	c, err := column.FillDefaults(f, c)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	return c, nil
}

func typeParamInt(f *schemapb.FieldSchema, key string) int {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == key {
			n, _ := strconv.Atoi(kv.GetValue())
			return n
		}
	}
	return 0
}

// checkValues validates the values of one column against its field.
func checkValues(f *schemapb.FieldSchema, c column.Column) error {
	name := f.GetName()
	switch c := c.(type) {
	case *column.FloatVectors:
		for i, v := range c.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return errcode.Invalid("field %q: the vector of row %d contains NaN or Inf (%v)", name, i/c.Dim, v)
			}
		}
	case *column.SparseVectors:
		return checkSparseRows(f, c)
	case *column.Ints:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		switch f.GetDataType() {
		case schemapb.DataType_Int8:
			lo, hi = math.MinInt8, math.MaxInt8
		case schemapb.DataType_Int16:
			lo, hi = math.MinInt16, math.MaxInt16
		}
		for i, v := range c.Data {
			if v < lo || v > hi {
				return errcode.Invalid("field %q: value %d of row %d is out of range for %s", name, v, i, f.GetDataType())
			}
		}
	case *column.Floats:
		for i, v := range c.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errcode.Invalid("field %q: value of row %d is NaN or Inf", name, i)
			}
		}
	case *column.Strings:
		maxLen := typeParamInt(f, "max_length")
		for i, s := range c.Data {
			if !utf8.ValidString(s) {
				return errcode.Invalid("field %q: the string of row %d is not valid UTF-8", name, i)
			}
			if l := utf8.RuneCountInString(s); maxLen > 0 && l > maxLen {
				return errcode.Invalid("length of varchar field %s exceeds max length, row number: %d, length: %d, max length: %d",
					name, i, l, maxLen)
			}
		}
	case *column.JSONs:
		for i, b := range c.Data {
			if c.IsNull(i) {
				continue
			}
			if len(b) > MaxJSONBytes {
				return errcode.Invalid("field %q: the JSON of row %d is %d bytes, over the limit %d", name, i, len(b), MaxJSONBytes)
			}
			if !json.Valid(b) {
				return errcode.Invalid("field %q: row %d is not valid JSON", name, i)
			}
		}
	case *column.Arrays:
		capacity := typeParamInt(f, "max_capacity")
		maxLen := typeParamInt(f, "max_length")
		for i, a := range c.Data {
			if c.IsNull(i) || a == nil {
				continue
			}
			if err := checkArray(f, a, capacity, maxLen, i); err != nil {
				return err
			}
		}
	case *column.ByteVectors:
		return checkByteVectors(name, c)
	}
	return nil
}

func checkArray(f *schemapb.FieldSchema, a *schemapb.ScalarField, capacity, maxLen, row int) error {
	name := f.GetName()
	var n int
	ok := true
	switch f.GetElementType() {
	case schemapb.DataType_Bool:
		ok, n = a.GetBoolData() != nil, len(a.GetBoolData().GetData())
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		ok, n = a.GetIntData() != nil, len(a.GetIntData().GetData())
	case schemapb.DataType_Int64:
		ok, n = a.GetLongData() != nil, len(a.GetLongData().GetData())
	case schemapb.DataType_Float:
		ok, n = a.GetFloatData() != nil, len(a.GetFloatData().GetData())
	case schemapb.DataType_Double:
		ok, n = a.GetDoubleData() != nil, len(a.GetDoubleData().GetData())
	case schemapb.DataType_VarChar:
		ok, n = a.GetStringData() != nil, len(a.GetStringData().GetData())
		for j, s := range a.GetStringData().GetData() {
			if l := utf8.RuneCountInString(s); maxLen > 0 && l > maxLen {
				return errcode.Invalid("length of Array array field %q exceeds max length, row number: %d, array index: %d, length: %d, max length: %d",
					name, row, j, l, maxLen)
			}
		}
	}
	if !ok && proto.Size(a) > 0 {
		return errcode.Invalid("field %q: the array of row %d does not hold %s elements", name, row, f.GetElementType())
	}
	if capacity > 0 && n > capacity {
		return errcode.Invalid("field %q: the array of row %d has %d elements, over max_capacity %d", name, row, n, capacity)
	}
	return nil
}

// checkDynamicRow checks one `$meta` value: a JSON object whose keys are not schema fields.
func checkDynamicRow(col *catalog.Collection, b []byte) error {
	if len(b) > MaxJSONBytes {
		return errcode.Invalid("the dynamic field is %d bytes, over the limit %d", len(b), MaxJSONBytes)
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return errcode.Invalid("the dynamic field must be a JSON object: %v", err)
	}
	for k := range m {
		if f := col.Field(k); f != nil && !f.GetIsDynamic() {
			return errcode.Invalid("the dynamic field contains key %q, which is a static field of the schema", k)
		}
	}
	return nil
}

// lastOccurrences returns, in request order, the rows of pk that hold the
// last occurrence of their key, and whether any key occurs more than once.
func lastOccurrences(pk column.Column) ([]int, bool) {
	n := pk.Len()
	last := make(map[any]int, n)
	for i := 0; i < n; i++ {
		last[column.KeyAt(pk, i)] = i
	}
	if len(last) == n {
		return nil, false
	}
	keep := make([]int, 0, len(last))
	for i := 0; i < n; i++ {
		if last[column.KeyAt(pk, i)] == i {
			keep = append(keep, i)
		}
	}
	return keep, true
}

// keepLast drops every row of r whose key occurs again later in the batch
// (the later row wins, as a later request would).
func keepLast(r *rows, pkID int64) {
	keep, dup := lastOccurrences(r.pk)
	if !dup {
		return
	}
	for id, c := range r.cols {
		r.cols[id] = c.Take(keep)
	}
	r.pk = r.cols[pkID]
	r.n = len(keep)
}

// errDuplicateUpsertKeys is Milvus 2.6's answer to an upsert that holds a
// primary key twice (code 1100, merr.WrapErrParameterInvalidMsg's text).
var errDuplicateUpsertKeys = errcode.InvalidParam("duplicate primary keys are not allowed in the same batch")

// hashPK maps a primary key to a shard.
func hashPK(pk column.Column, i int, shards int) int {
	var h uint32
	switch c := pk.(type) {
	case *column.Ints:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(c.Data[i]))
		h = crc32.ChecksumIEEE(b[:])
	case *column.Strings:
		h = crc32.ChecksumIEEE([]byte(c.Data[i]))
	}
	return int(h % uint32(shards))
}

// shardRows groups row indexes by shard.
func shardRows(pk column.Column, n, shards int) [][]int {
	out := make([][]int, shards)
	for i := 0; i < n; i++ {
		s := hashPK(pk, i, shards)
		out[s] = append(out[s], i)
	}
	return out
}

func (p *Proxy) partitionFor(col *catalog.Collection, name string) (int64, error) {
	if name == "" {
		name = "_default"
	} else if err := validPartition(name); err != nil {
		return 0, err
	}
	part, found := col.Partition(name)
	if !found {
		return 0, errcode.New(errcode.PartitionNotFound, "partition not found[partition=%s]", name)
	}
	return part.ID, nil
}

// insertMessages builds the per-shard insert batches of rows r; segment IDs
// are assigned by assign (called under the pchannel locks).
type shardInsert struct {
	shard int
	rows  []int
	req   *msgpb.InsertRequest
	bytes int64
}

func (p *Proxy) buildInserts(ctx context.Context, col *catalog.Collection, partID int64, r *rows) ([]shardInsert, error) {
	rowIDs, err := p.ids.Allocate(ctx, uint32(r.n))
	if err != nil {
		return nil, err
	}
	var out []shardInsert
	for shard, idx := range shardRows(r.pk, r.n, len(col.VChannels)) {
		if len(idx) == 0 {
			continue
		}
		req := &msgpb.InsertRequest{
			ShardName: col.VChannels[shard], DbName: col.DBName, CollectionName: col.Name,
			CollectionID: col.ID, PartitionID: partID, NumRows: uint64(len(idx)),
			Version: msgpb.InsertDataVersion_ColumnBased,
		}
		for _, i := range idx {
			req.RowIDs = append(req.RowIDs, int64(rowIDs)+int64(i))
			if r.ts != nil {
				req.Timestamps = append(req.Timestamps, uint64(r.ts.Data[i]))
			}
		}
		var size int64
		for _, f := range col.Schema.GetFields() {
			c, ok := r.cols[f.GetFieldID()]
			if !ok {
				continue
			}
			t := c
			if len(idx) != r.n {
				t = c.Take(idx)
			}
			size += int64(t.MemorySize())
			req.FieldsData = append(req.FieldsData, column.ToFieldData(f.GetName(), f.GetFieldID(), t))
		}
		// The consumers' own decoding: what they would reject is refused here,
		// before the append, never acknowledged and then unappliable.
		if _, err := column.InsertColumns(col.Schema, req.GetFieldsData(), len(idx)); err != nil {
			return nil, errcode.Invalid("%v", err)
		}
		out = append(out, shardInsert{shard: shard, rows: idx, req: req, bytes: size + 16*int64(len(idx))})
	}
	return out, nil
}

func (p *Proxy) deleteMessages(col *catalog.Collection, partID int64, pks column.Column) map[int]*msgpb.DeleteRequest {
	out := map[int]*msgpb.DeleteRequest{}
	for shard, idx := range shardRows(pks, pks.Len(), len(col.VChannels)) {
		if len(idx) == 0 {
			continue
		}
		req := &msgpb.DeleteRequest{
			ShardName: col.VChannels[shard], DbName: col.DBName, CollectionName: col.Name,
			CollectionID: col.ID, PartitionID: partID, NumRows: int64(len(idx)),
		}
		switch c := pks.Take(idx).(type) {
		case *column.Ints:
			req.PrimaryKeys = &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: c.Data}}}
		case *column.Strings:
			req.PrimaryKeys = &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: c.Data}}}
		}
		out[shard] = req
	}
	return out
}

// write appends deletes (first) and inserts at one timestamp through the
// DML role, and returns the timestamp.
func (p *Proxy) write(ctx context.Context, col *catalog.Collection, deletes map[int]*msgpb.DeleteRequest, inserts []shardInsert) (uint64, error) {
	var dels []*msgpb.DeleteRequest
	for _, shard := range slices.Sorted(maps.Keys(deletes)) {
		dels = append(dels, deletes[shard])
	}
	ins := make([]*msgpb.InsertRequest, len(inserts))
	rowBytes := make([]int64, len(inserts))
	for i, in := range inserts {
		ins[i] = in.req
		rowBytes[i] = in.bytes / int64(len(in.rows))
	}
	return p.dml.AppendDML(ctx, col, dels, ins, rowBytes)
}

func idsOf(pk column.Column) *schemapb.IDs {
	switch c := pk.(type) {
	case *column.Ints:
		return &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: c.Data}}}
	case *column.Strings:
		return &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: c.Data}}}
	}
	return nil
}

func (p *Proxy) checkSize(req proto.Message) error {
	return checkRequestSize(proto.Size(req), p.cfg.MaxRequestBytes)
}

func (p *Proxy) genPKs(ctx context.Context) func(n int) ([]int64, error) {
	return func(n int) ([]int64, error) {
		first, err := p.ids.Allocate(ctx, uint32(n))
		if err != nil {
			return nil, err
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(first) + int64(i)
		}
		return out, nil
	}
}

func mutationError(err error) *milvuspb.MutationResult {
	return &milvuspb.MutationResult{Status: errcode.Status(err)}
}

// Insert validates and appends rows; it answers once they are durable in the WAL.
func (p *Proxy) Insert(ctx context.Context, req *milvuspb.InsertRequest) (*milvuspb.MutationResult, error) {
	if err := p.checkSize(req); err != nil {
		return mutationError(err), nil
	}
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return mutationError(err), nil
	}
	if err := p.admitWrite(col, req, false); err != nil {
		return mutationError(err), nil
	}
	if req.GetSchemaTimestamp() != 0 && req.GetSchemaTimestamp() < col.SchemaVersionTS {
		return mutationError(errcode.New(errcode.SchemaMismatch, "collection schema mismatch[collection=%s]", col.Name)), nil
	}
	if !keyMode(col) {
		if _, err := p.partitionFor(col, req.GetPartitionName()); err != nil {
			return mutationError(err), nil
		}
	} else if req.GetPartitionName() != "" {
		return mutationError(errKeyModePartitionNames), nil
	}
	r, err := validateRows(col, req.GetFieldsData(), req.GetNumRows(), p.genPKs(ctx), false)
	if err != nil {
		return mutationError(err), nil
	}
	// The answer lists every row of the request, as Milvus's does; of a key
	// given twice only the last row is stored.
	ids, n := idsOf(r.pk), r.n
	keepLast(r, col.PKField().GetFieldID())
	inserts, err := p.routedInserts(ctx, col, req.GetPartitionName(), r)
	if err != nil {
		return mutationError(err), nil
	}
	ts, err := p.write(ctx, col, nil, inserts)
	if err != nil {
		return mutationError(err), nil
	}
	succ := make([]uint32, n)
	for i := range succ {
		succ[i] = uint32(i)
	}
	return &milvuspb.MutationResult{Status: ok(), IDs: ids, SuccIndex: succ, InsertCnt: int64(n), Timestamp: ts}, nil
}

// Upsert deletes the rows' keys and inserts the rows at one timestamp.
// On autoID collections the given keys are deleted and new keys generated.
// A partial update (partial_update, or field_ops) first merges the rows sent
// with the stored ones (partial.go).
func (p *Proxy) Upsert(ctx context.Context, req *milvuspb.UpsertRequest) (*milvuspb.MutationResult, error) {
	if err := p.checkSize(req); err != nil {
		return mutationError(err), nil
	}
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return mutationError(err), nil
	}
	if err := p.admitWrite(col, req, false); err != nil {
		return mutationError(err), nil
	}
	if req.GetSchemaTimestamp() != 0 && req.GetSchemaTimestamp() < col.SchemaVersionTS {
		return mutationError(errcode.New(errcode.SchemaMismatch, "collection schema mismatch[collection=%s]", col.Name)), nil
	}
	ops, partial, err := parseFieldOps(col, req)
	if err != nil {
		return mutationError(err), nil
	}
	if !keyMode(col) {
		if _, err := p.partitionFor(col, req.GetPartitionName()); err != nil {
			return mutationError(err), nil
		}
	} else if req.GetPartitionName() != "" {
		return mutationError(errKeyModePartitionNames), nil
	}
	var r *rows
	if partial {
		r, err = p.partialRows(ctx, col, req, ops)
	} else {
		r, err = validateRows(col, req.GetFieldsData(), req.GetNumRows(), p.genPKs(ctx), true)
	}
	if err != nil {
		return mutationError(err), nil
	}
	if _, dup := lastOccurrences(r.pk); dup {
		return mutationError(errDuplicateUpsertKeys), nil
	}
	oldPKs := r.pk
	pkField := col.PKField()
	if pkField.GetAutoID() {
		pk, err := autoIDs(pkField, r.n, p.genPKs(ctx))
		if err != nil {
			return mutationError(err), nil
		}
		r.pk = pk
		r.cols[pkField.GetFieldID()] = r.pk
	}
	inserts, err := p.routedInserts(ctx, col, req.GetPartitionName(), r)
	if err != nil {
		return mutationError(err), nil
	}
	// The delete covers every partition: an upsert replaces the key wherever it lives.
	deletes := p.deleteMessages(col, -1, oldPKs)
	ts, err := p.write(ctx, col, deletes, inserts)
	if err != nil {
		return mutationError(err), nil
	}
	succ := make([]uint32, r.n)
	for i := range succ {
		succ[i] = uint32(i)
	}
	return &milvuspb.MutationResult{Status: ok(), IDs: idsOf(r.pk), SuccIndex: succ, UpsertCnt: int64(r.n), Timestamp: ts}, nil
}

// Delete removes the rows matching expr: primary-key expressions directly,
// other filters by querying the matching keys first.
func (p *Proxy) Delete(ctx context.Context, req *milvuspb.DeleteRequest) (*milvuspb.MutationResult, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return mutationError(err), nil
	}
	if err := p.admitWrite(col, req, true); err != nil {
		return mutationError(err), nil
	}
	partID := int64(-1)
	if req.GetPartitionName() != "" {
		if partID, err = p.partitionFor(col, req.GetPartitionName()); err != nil {
			return mutationError(err), nil
		}
	}
	if req.GetExpr() == "" {
		return mutationError(errcode.Invalid("the delete expression is empty")), nil
	}
	pks, err := p.deleteKeys(ctx, col, partID, req.GetExpr(), req.GetExprTemplateValues(), req.GetConsistencyLevel())
	if err != nil {
		return mutationError(err), nil
	}
	// Like Milvus ≥ 2.3.2, a delete reports only delete_cnt: pymilvus returns
	// the primary keys instead of {"delete_count": n} when IDs are set.
	if pks.Len() == 0 {
		return &milvuspb.MutationResult{Status: ok()}, nil
	}
	ts, err := p.write(ctx, col, p.deleteMessages(col, partID, pks), nil)
	if err != nil {
		return mutationError(err), nil
	}
	return &milvuspb.MutationResult{Status: ok(), DeleteCnt: int64(pks.Len()), Timestamp: ts}, nil
}

// vectorDataLen is the number of scalars (bytes for the byte-packed types)
// a wire vector column carries, as Milvus counts them in its dim errors.
func vectorDataLen(v *schemapb.VectorField) int {
	switch {
	case v.GetFloatVector() != nil:
		return len(v.GetFloatVector().GetData())
	case v.GetBinaryVector() != nil:
		return len(v.GetBinaryVector())
	case v.GetFloat16Vector() != nil:
		return len(v.GetFloat16Vector())
	case v.GetBfloat16Vector() != nil:
		return len(v.GetBfloat16Vector())
	case v.GetInt8Vector() != nil:
		return len(v.GetInt8Vector())
	}
	return 0
}

// vectorPayloadMissing is Milvus's error for a column of a vector field
// that is not nullable but carries no vectors of its type (pymilvus sends
// that for rows whose vector is None).
func vectorPayloadMissing(f *schemapb.FieldSchema, fd *schemapb.FieldData) error {
	if f.GetNullable() {
		return nil
	}
	v := fd.GetVectors()
	var kind string
	switch f.GetDataType() {
	case schemapb.DataType_FloatVector:
		if v.GetFloatVector().GetData() == nil {
			kind = "float vector"
		}
	case schemapb.DataType_Float16Vector:
		if v.GetFloat16Vector() == nil {
			kind = "float16 vector"
		}
	case schemapb.DataType_BFloat16Vector:
		if v.GetBfloat16Vector() == nil {
			kind = "bfloat16 vector"
		}
	case schemapb.DataType_BinaryVector:
		if v.GetBinaryVector() == nil {
			kind = "binary vector"
		}
	case schemapb.DataType_SparseFloatVector:
		if v.GetSparseFloatVector() == nil {
			kind = "sparse float vector"
		}
	case schemapb.DataType_Int8Vector:
		if v.GetInt8Vector() == nil {
			kind = "int8 vector"
		}
	}
	if kind == "" {
		return nil
	}
	return errcode.Invalid("%s field '%s' is illegal, array type mismatch: invalid parameter[expected=need %s][actual=got nil]",
		kind, f.GetName(), kind)
}

// vectorKind names a vector type's element as Milvus's messages do.
func vectorKind(t schemapb.DataType) string {
	switch t {
	case schemapb.DataType_BinaryVector:
		return "binary"
	case schemapb.DataType_Float16Vector:
		return "float16"
	case schemapb.DataType_BFloat16Vector:
		return "bfloat16"
	case schemapb.DataType_Int8Vector:
		return "int8"
	}
	return "float"
}
