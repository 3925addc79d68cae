package rootcoord

import (
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// codeStructError is the code Milvus gives its struct-array schema errors
// (a plain error, not a merr code: clients see 65535).
const codeStructError int32 = 65535

// prepareStructFields validates the Array of Structs fields of in and adds
// them to the stored schema out, assigning field IDs from next on: each
// struct field gets one ID and each of its sub-fields the following ones.
// The stored schema keeps in.StructArrayFields as the client sent them
// (sub-fields under their own names, with IDs), which is what describe
// returns, and also appends one column field per sub-field to out.Fields,
// named catalog.StructSubFieldName(struct, sub): an Array field for a scalar
// sub-field, an ArrayOfVector field for a vector one, each with the
// struct's max_capacity. Every row-data path (WAL, binlogs, segments)
// handles those columns as ordinary fields; the proxy splits a struct
// column into them on insert and joins them back on output.
func prepareStructFields(in, out *schemapb.CollectionSchema, next int64) (int64, error) {
	names := map[string]bool{}
	for _, f := range out.GetFields() {
		names[f.GetName()] = true
	}
	for _, sa := range in.GetStructArrayFields() {
		name := sa.GetName()
		if err := catalog.ValidateName("field", name); err != nil {
			return 0, err
		}
		if names[name] {
			return 0, errcode.Invalid("duplicated field name %q", name)
		}
		names[name] = true
		if len(sa.GetFields()) == 0 {
			return 0, errcode.New(codeStructError, "struct array field %s has no sub-fields", name)
		}
		stored := &schemapb.StructArrayFieldSchema{
			FieldID: next, Name: name, Description: sa.GetDescription(),
			TypeParams: sa.GetTypeParams(),
		}
		next++
		subNames := map[string]bool{}
		capacity := ""
		structCap, hasCap := typeParam(&schemapb.FieldSchema{TypeParams: sa.GetTypeParams()}, "max_capacity")
		for _, sub := range sa.GetFields() {
			if _, ok := typeParam(sub, "max_capacity"); !ok && hasCap {
				// The Go SDK puts max_capacity on the struct, pymilvus on
				// every sub-field: the stored form has it on the sub-fields.
				sub = proto.Clone(sub).(*schemapb.FieldSchema)
				sub.TypeParams = append(sub.TypeParams, &commonpb.KeyValuePair{Key: "max_capacity", Value: structCap})
			}
			if err := checkStructSubField(name, sub); err != nil {
				return 0, err
			}
			if subNames[sub.GetName()] {
				return 0, errcode.Invalid("duplicated field name %q in struct array field %s", sub.GetName(), name)
			}
			subNames[sub.GetName()] = true
			c, _ := typeParam(sub, "max_capacity")
			if capacity != "" && c != capacity {
				return 0, errcode.New(codeStructError, "all sub-fields of struct array field %s must have the same max_capacity", name)
			}
			capacity = c
			nf := &schemapb.FieldSchema{
				FieldID: next, Name: sub.GetName(), Description: sub.GetDescription(),
				DataType: sub.GetDataType(), ElementType: sub.GetElementType(), TypeParams: sub.GetTypeParams(),
				IndexParams: sub.GetIndexParams(),
			}
			next++
			stored.Fields = append(stored.Fields, nf)
			flat := &schemapb.FieldSchema{
				FieldID: nf.GetFieldID(), Name: catalog.StructSubFieldName(name, sub.GetName()),
				Description: sub.GetDescription(), DataType: sub.GetDataType(), ElementType: sub.GetElementType(),
				TypeParams: sub.GetTypeParams(), IndexParams: sub.GetIndexParams(),
			}
			out.Fields = append(out.Fields, flat)
		}
		out.StructArrayFields = append(out.StructArrayFields, stored)
	}
	return next, nil
}

// checkStructSubField validates one sub-field of struct array field
// structName as pymilvus sends it: a scalar sub-field as an Array of its
// type, a vector sub-field as an ArrayOfVector of FloatVector (the only
// vector type Milvus 2.6 supports in a struct), with max_capacity in
// (0, MaxArrayCap]. Sub-fields cannot be keys, nullable, auto-ID or have a
// default value.
func checkStructSubField(structName string, f *schemapb.FieldSchema) error {
	name := f.GetName()
	if err := catalog.ValidateName("field", name); err != nil {
		return err
	}
	if f.GetIsPrimaryKey() || f.GetIsPartitionKey() || f.GetIsClusteringKey() || f.GetAutoID() {
		return errcode.New(codeStructError, "field %s in struct array field %s cannot be a primary, partition or clustering key", name, structName)
	}
	if f.GetNullable() {
		return errcode.New(codeStructError, "nullable is not supported for fields in struct array field %s, field: %s", structName, name)
	}
	if f.GetDefaultValue() != nil {
		return errcode.New(codeStructError, "default value is not supported for fields in struct array field %s, field: %s", structName, name)
	}
	switch f.GetDataType() {
	case schemapb.DataType_Array:
		switch et := f.GetElementType(); et {
		case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
			schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double:
		case schemapb.DataType_VarChar:
			v, ok := typeParam(f, "max_length")
			if !ok {
				return errcode.Invalid("field %q: type param max_length should be specified for an array of VarChar", name)
			}
			if err := checkMaxLength(name, v); err != nil {
				return err
			}
		default:
			return errcode.New(codeStructError, "element type %s is not supported for fields in struct array field %s, field: %s",
				et, structName, name)
		}
	case schemapb.DataType_ArrayOfVector:
		if et := f.GetElementType(); et != schemapb.DataType_FloatVector {
			return errcode.New(codeStructError, "now only float vector is supported for fields in struct array field %s, field: %s, element type: %s",
				structName, name, et)
		}
		if err := checkDenseVector(&schemapb.FieldSchema{
			Name: name, DataType: schemapb.DataType_FloatVector,
			TypeParams: f.GetTypeParams(),
		}); err != nil {
			return err
		}
	default:
		return errcode.New(codeStructError, "data type %s is not supported for fields in struct array field %s, field: %s",
			f.GetDataType(), structName, name)
	}
	v, ok := typeParam(f, "max_capacity")
	if !ok {
		return errcode.Invalid("field %q: type param max_capacity should be specified for struct array field %s", name, structName)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > MaxArrayCap {
		return errcode.Invalid("the maximum capacity specified for a Array should be in (0, %d]", MaxArrayCap)
	}
	return nil
}

// structAlterField returns a stand-in for the struct field name of schema
// that AlterField can change (nil when there is none): its ID,
// description and type params (mmap.enabled, warmup); syncStructAlter
// writes the changes back.
func structAlterField(schema *schemapb.CollectionSchema, name string) *schemapb.FieldSchema {
	for _, sa := range schema.GetStructArrayFields() {
		if sa.GetName() == name {
			return &schemapb.FieldSchema{
				FieldID: sa.GetFieldID(), Name: name, DataType: schemapb.DataType_ArrayOfStruct,
				Description: sa.GetDescription(), TypeParams: sa.GetTypeParams(),
			}
		}
	}
	return nil
}

// syncStructAlter copies the description and type params of the altered
// field f into schema's struct fields: into the struct itself when f is
// its stand-in (structAlterField), into the sub-field's entry when f is a
// sub-field column "struct[sub]", so describe shows the change.
func syncStructAlter(schema *schemapb.CollectionSchema, f *schemapb.FieldSchema) {
	for _, sa := range schema.GetStructArrayFields() {
		if sa.GetFieldID() == f.GetFieldID() {
			sa.Description, sa.TypeParams = f.GetDescription(), f.GetTypeParams()
		}
		for _, sub := range sa.GetFields() {
			if sub.GetFieldID() == f.GetFieldID() {
				sub.Description, sub.TypeParams = f.GetDescription(), f.GetTypeParams()
			}
		}
	}
}
