package proxy

// Partial update: Milvus 2.6's upsert in merge mode (UpsertRequest.partial_update,
// and the field_ops that imply it).
//
// The request carries the primary key and only the fields to change. The proxy
// reads the stored rows of those keys with a Strong query (restricted to the
// target partition, or to every partition in partition-key mode, as Milvus
// does), merges, and writes the merged rows through the ordinary upsert path:
// one delete and one insert at one timestamp, appended as one WAL batch, so a
// failure anywhere before the append leaves nothing applied.
//
// Merge rules, per row of the request:
//   - a key that is stored keeps its stored value for every field not sent;
//     a field sent replaces the stored value (a null sent sets null), except
//     for an ARRAY field with an ARRAY_APPEND or ARRAY_REMOVE op, whose
//     stored array is appended to, or has every element equal to one of the
//     payload's removed (a null payload leaves the stored array as it is; a
//     null stored array counts as empty);
//   - the dynamic field merges by key: the keys sent overwrite or add to the
//     stored object, the other stored keys stay (stored keys that have since
//     become static fields are dropped);
//   - a key that is not stored is inserted, and then every field not sent must
//     be nullable (it becomes null) or have a default value (it takes it);
//     otherwise the whole request fails with Milvus's "fieldSchema(F) has no
//     corresponding fieldData pass in". Ops do not apply to new rows: the
//     payload is stored as sent.
//
// Concurrency: the read and the append are not one transaction. Two partial
// updates of the same key that overlap may both read the same stored row;
// both are applied in WAL order and the later one's row wins whole (last
// writer wins at the row level), as in Milvus.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// codeUnknown is the code Milvus reports for an error that carries no merr
// code of its own (65535), as its merge step's capacity error does.
const codeUnknown int32 = 65535

// fieldOps maps a field ID to the non-REPLACE op the request asks for it.
type fieldOps map[int64]schemapb.FieldPartialUpdateOp_OpType

// parseFieldOps validates the request's field_ops against the schema and the
// columns sent, with Milvus's checks and messages, and returns the
// non-REPLACE ops and whether the request is a partial update (partial_update
// set, or any non-REPLACE op present: an op implies merge mode).
func parseFieldOps(col *catalog.Collection, req *milvuspb.UpsertRequest) (fieldOps, bool, error) {
	if len(req.GetFieldOps()) == 0 {
		return nil, req.GetPartialUpdate(), nil
	}
	sent := make(map[string]*schemapb.FieldData, len(req.GetFieldsData()))
	for _, fd := range req.GetFieldsData() {
		sent[fd.GetFieldName()] = fd
	}
	ops := fieldOps{}
	seen := map[string]bool{}
	for _, o := range req.GetFieldOps() {
		name := o.GetFieldName()
		if name == "" {
			return nil, false, errcode.InvalidParam("FieldPartialUpdateOp.field_name is required")
		}
		if seen[name] {
			return nil, false, errcode.InvalidParam("duplicate partial-update op for field %q", name)
		}
		seen[name] = true
		op := o.GetOp()
		if op == schemapb.FieldPartialUpdateOp_REPLACE {
			continue // the default: the same as no op
		}
		f := col.Field(name)
		if f != nil && f.GetIsPrimaryKey() {
			return nil, false, errcode.InvalidParam("field %q is the primary key and cannot carry a partial-update op", name)
		}
		if f == nil || f.GetFieldID() < 100 {
			return nil, false, errcode.InvalidParam("field %q not found in collection schema", name)
		}
		switch op {
		case schemapb.FieldPartialUpdateOp_ARRAY_APPEND, schemapb.FieldPartialUpdateOp_ARRAY_REMOVE:
			if f.GetDataType() != schemapb.DataType_Array {
				return nil, false, errcode.InvalidParam("op %s requires Array field, but field %q is %s", op, name, f.GetDataType())
			}
		default:
			return nil, false, errcode.InvalidParam("unsupported partial update op: %s", op)
		}
		fd := sent[name]
		if fd == nil {
			return nil, false, errcode.InvalidParam("partial-update op targets field %q not present in fields_data", name)
		}
		if got := fd.GetScalars().GetArrayData().GetElementType(); got != schemapb.DataType_None && got != f.GetElementType() {
			return nil, false, errcode.InvalidParam("field %q expects element type %s but request provides %s", name, f.GetElementType(), got)
		}
		if capacity := typeParamInt(f, "max_capacity"); op == schemapb.FieldPartialUpdateOp_ARRAY_APPEND && capacity > 0 {
			for i, a := range fd.GetScalars().GetArrayData().GetData() {
				if l := column.ScalarLen(a); l > capacity {
					return nil, false, errcode.InvalidParam("ARRAY_APPEND payload for field %q row %d has length %d exceeding max_capacity %d",
						name, i, l, capacity)
				}
			}
		}
		ops[f.GetFieldID()] = op
	}
	return ops, req.GetPartialUpdate() || len(ops) > 0, nil
}

// partialRows validates the columns a partial update sent, reads the stored
// rows of its keys and returns the merged rows, every field filled.
func (p *Proxy) partialRows(ctx context.Context, col *catalog.Collection, req *milvuspb.UpsertRequest, ops fieldOps) (*rows, error) {
	given, err := validateGiven(col, req.GetFieldsData(), req.GetNumRows(), true)
	if err != nil {
		return nil, err
	}
	if given.pk == nil {
		return nil, errcode.InvalidParam("must assign pk when upsert, primary field: %s", col.PKField().GetName())
	}
	if _, dup := lastOccurrences(given.pk); dup {
		return nil, errDuplicateUpsertKeys
	}
	stored, err := p.storedRows(ctx, col, req.GetPartitionName(), given.pk)
	if err != nil {
		return nil, err
	}
	merged, err := mergePartial(col, given, stored, ops)
	if err != nil {
		return nil, err
	}
	// BM25 outputs follow the merged text, sent or stored.
	if err := runFunctions(col, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// storedRows is what a partial update found of its keys: the stored columns
// (every user field) and, per key, its row there.
type storedRows struct {
	cols map[int64]column.Column
	row  map[any]int
}

// pkTemplate names the template value that carries a partial update's keys
// in the filter of its read.
const pkTemplate = "partial_update_pks"

// storedRows reads, with Strong consistency, every user field of the stored
// rows whose keys are in pks: in the named partition, or in every partition
// when the collection routes by partition key. A read error keeps its code
// and says "failed to query", as Milvus's does.
func (p *Proxy) storedRows(ctx context.Context, col *catalog.Collection, partName string, pks column.Column) (*storedRows, error) {
	pk := col.PKField()
	keys := &schemapb.TemplateArrayValue{}
	switch c := pks.(type) {
	case *column.Ints:
		keys.Data = &schemapb.TemplateArrayValue_LongData{LongData: &schemapb.LongArray{Data: c.Data}}
	case *column.Strings:
		keys.Data = &schemapb.TemplateArrayValue_StringData{StringData: &schemapb.StringArray{Data: c.Data}}
	default:
		return nil, errcode.Invalid("the primary key field %q of type %s cannot be updated partially", pk.GetName(), pks.Type())
	}
	q := &plan.Query{Read: plan.Read{
		CollectionID: col.ID, Strong: true,
		Filter:    fmt.Sprintf("%s in {%s}", pk.GetName(), pkTemplate),
		Templates: map[string]*schemapb.TemplateValue{pkTemplate: {Val: &schemapb.TemplateValue_ArrayVal{ArrayVal: keys}}},
	}}
	outputs := functionOutputs(col) // recomputed from the merged text
	for _, f := range col.Schema.GetFields() {
		if f.GetFieldID() >= 100 && !outputs[f.GetFieldID()] {
			q.OutputFields = append(q.OutputFields, f.GetFieldID())
		}
	}
	if !keyMode(col) {
		partID, err := p.partitionFor(col, partName)
		if err != nil {
			return nil, err
		}
		q.PartitionIDs = []int64{partID}
	}
	res, err := p.query.Query(ctx, q)
	if err != nil {
		return nil, errcode.New(errcode.CodeOf(err), "failed to query: %v", err)
	}
	out := &storedRows{cols: res.Fields, row: make(map[any]int, res.Rows)}
	if res.Rows == 0 {
		return out, nil
	}
	keyCol := res.Fields[pk.GetFieldID()]
	if keyCol == nil || keyCol.Len() != res.Rows {
		return nil, errcode.New(errcode.Unexpected, "failed to query: the stored rows of collection %q lack their primary keys", col.Name)
	}
	for j := 0; j < res.Rows; j++ {
		out.row[column.KeyAt(keyCol, j)] = j
	}
	return out, nil
}

// mergePartial merges the validated columns of a partial update (given)
// with the stored rows of its keys into full rows; see the package comment
// of this file for the rules. It is pure: no I/O, inputs left unchanged.
func mergePartial(col *catalog.Collection, given *rows, stored *storedRows, ops fieldOps) (*rows, error) {
	n := given.n
	at := make([]int, n) // the stored row of each request row, -1 for a new key
	fresh := false
	for i := range at {
		j, found := stored.row[column.KeyAt(given.pk, i)]
		if !found {
			j, fresh = -1, true
		}
		at[i] = j
	}
	outputs := functionOutputs(col) // runFunctions computes them after the merge
	if fresh {
		for _, f := range col.Schema.GetFields() {
			if f.GetFieldID() < 100 || f.GetIsDynamic() || given.cols[f.GetFieldID()] != nil || outputs[f.GetFieldID()] {
				continue
			}
			if !f.GetNullable() && f.GetDefaultValue() == nil {
				return nil, errcode.InvalidParam("fieldSchema(%s) has no corresponding fieldData pass in", f.GetName())
			}
		}
	}
	out := &rows{n: n, cols: make(map[int64]column.Column, len(col.Schema.GetFields())), pk: given.pk}
	for _, f := range col.Schema.GetFields() {
		id := f.GetFieldID()
		if id < 100 || outputs[id] {
			continue
		}
		var c column.Column
		var err error
		switch {
		case f.GetIsDynamic():
			c, err = mergeDynamic(col, given.cols[id], stored.cols[id], at)
		case ops[id] != schemapb.FieldPartialUpdateOp_REPLACE:
			c, err = mergeArrayOp(f, ops[id], given.cols[id], stored.cols[id], at)
		default:
			c, err = mergeField(f, given.cols[id], stored.cols[id], at)
		}
		if err != nil {
			return nil, err
		}
		out.cols[id] = c
	}
	return out, nil
}

// mergeField builds field f's column: the sent column when there is one
// (it replaces every row), else each stored row's value, and for a new key
// null or the field's default value.
func mergeField(f *schemapb.FieldSchema, sent, stored column.Column, at []int) (column.Column, error) {
	if sent != nil {
		return sent, nil
	}
	dst, err := column.New(f)
	if err != nil {
		return nil, err
	}
	var fill column.Column
	for i, j := range at {
		if j >= 0 {
			if err := sameColumnType(f, dst, stored); err != nil {
				return nil, err
			}
			dst.AppendFrom(stored, j)
			continue
		}
		if fill == nil {
			var err error
			// column.Fill refuses types that cannot hold nulls (vectors).
			if !column.Fillable(f) {
				return nil, errcode.InvalidParam("fieldSchema(%s) has no corresponding fieldData pass in", f.GetName())
			}
			if fill, err = column.Fill(f, len(at)); err != nil || fill.Len() != len(at) {
				return nil, errcode.InvalidParam("fieldSchema(%s) has no corresponding fieldData pass in", f.GetName())
			}
		}
		dst.AppendFrom(fill, i)
	}
	return dst, nil
}

// sameColumnType checks that a stored column can be appended to dst (the
// column type column.New gives the field), so AppendFrom cannot panic.
func sameColumnType(f *schemapb.FieldSchema, dst, stored column.Column) error {
	if stored == nil || reflect.TypeOf(stored) != reflect.TypeOf(dst) {
		return errcode.New(errcode.Unexpected, "field %q: the stored rows read for the partial update do not hold the field", f.GetName())
	}
	return nil
}

// mergeDynamic builds the dynamic field's column: each stored object with
// the sent keys merged in, or the sent object for a new key.
func mergeDynamic(col *catalog.Collection, sent, stored column.Column, at []int) (column.Column, error) {
	out := &column.JSONs{Data: make([][]byte, len(at))}
	var sentJSON, storedJSON *column.JSONs
	if sent != nil {
		sentJSON = sent.(*column.JSONs)
	}
	if stored != nil {
		storedJSON, _ = stored.(*column.JSONs)
	}
	for i, j := range at {
		var s []byte
		if sentJSON != nil {
			s = sentJSON.Data[i]
		}
		if j < 0 {
			if s == nil {
				s = []byte("{}")
			}
			out.Data[i] = s
			continue
		}
		if storedJSON == nil {
			return nil, errcode.New(errcode.Unexpected, "the stored rows read for the partial update do not hold the dynamic field")
		}
		b, err := mergeDynamicRow(col, storedJSON.Data[j], s)
		if err != nil {
			return nil, err
		}
		if err := checkDynamicRow(col, b); err != nil {
			return nil, errcode.Invalid("row %d: %v", i, err)
		}
		out.Data[i] = b
	}
	return out, nil
}

// mergeDynamicRow merges the sent `$meta` object (nil: none sent) into the
// stored one: sent keys win, other stored keys stay, and stored keys that
// are now static fields of the schema are dropped.
func mergeDynamicRow(col *catalog.Collection, stored, sent []byte) ([]byte, error) {
	m := map[string]json.RawMessage{}
	if len(stored) > 0 {
		if err := json.Unmarshal(stored, &m); err != nil {
			return nil, errcode.New(errcode.Unexpected, "the stored dynamic field is not a JSON object: %v", err)
		}
	}
	changed := false
	for k := range m {
		if f := col.Field(k); f != nil && !f.GetIsDynamic() {
			delete(m, k)
			changed = true
		}
	}
	if len(sent) > 0 {
		var add map[string]json.RawMessage
		if err := json.Unmarshal(sent, &add); err != nil {
			return nil, errcode.Invalid("the dynamic field must be a JSON object: %v", err)
		}
		for k, v := range add {
			m[k] = v
			changed = true
		}
	}
	if !changed && len(stored) > 0 {
		return stored, nil
	}
	return json.Marshal(m)
}
