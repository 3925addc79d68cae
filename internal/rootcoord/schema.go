package rootcoord

import (
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// Limits on schemas and the catalog, at Milvus 2.6's defaults (the fields,
// vector fields, partitions and shards are the defaults of Limits, which
// the configuration may change).
const (
	// MaxDim bounds a vector's dim (proxy.maxDimension; 8× for binary vectors).
	MaxDim = 32768
	// MaxVarCharLen bounds a VarChar's max_length (proxy.maxVarCharLength).
	MaxVarCharLen = 65535
	// MaxFields bounds the fields of a schema (proxy.maxFieldNum).
	MaxFields = 64
	// MaxVectorFields bounds the vector fields of a schema (proxy.maxVectorFieldNum).
	MaxVectorFields = 4
	// MaxNameLength bounds every name (proxy.maxNameLength).
	MaxNameLength = catalog.MaxNameLength
	// MaxArrayCap bounds an array's max_capacity.
	MaxArrayCap = 4096
	// MaxPartitions bounds the partitions of a collection, _default
	// included (rootCoord.maxPartitionNum).
	MaxPartitions = 1024
	// DefaultKeyPartitions is the number of partitions of a partition-key
	// collection created without num_partitions, as in Milvus.
	DefaultKeyPartitions = 16
	// MaxShards bounds the shards of a collection (proxy.maxShardNum and
	// rootCoord.dmlChannelNum).
	MaxShards = 16

	// DynamicField, RowIDField, TimestampField and DefaultPartName are the
	// reserved field and partition names.
	DynamicField    = "$meta"
	RowIDField      = "RowID"
	TimestampField  = "Timestamp"
	DefaultPartName = "_default"
)

func typeParam(f *schemapb.FieldSchema, key string) (string, bool) {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return "", false
}

// PrepareSchema validates a client schema and returns the stored form:
// field IDs assigned from 100 in order, the `$meta` field appended when the
// dynamic field is enabled, and the system fields RowID (0) and Timestamp (1).
func PrepareSchema(in *schemapb.CollectionSchema) (*schemapb.CollectionSchema, error) {
	return prepareSchema(in, DefaultLimits())
}

// prepareSchema is PrepareSchema under limits.
func prepareSchema(in *schemapb.CollectionSchema, limits Limits) (*schemapb.CollectionSchema, error) {
	if err := catalog.ValidateName("collection", in.GetName()); err != nil {
		return nil, err
	}
	if len(in.GetFields()) == 0 {
		return nil, errcode.Invalid("schema of collection %q has no fields", in.GetName())
	}
	if len(in.GetFields()) > limits.MaxFields {
		return nil, errcode.Invalid("maximum field's number should be limited to %d", limits.MaxFields)
	}
	out := &schemapb.CollectionSchema{
		Name: in.GetName(), Description: in.GetDescription(), AutoID: in.GetAutoID(),
		EnableDynamicField: in.GetEnableDynamicField(), Properties: in.GetProperties(),
		Functions: in.GetFunctions(),
	}
	names := map[string]bool{}
	pks, vectors := 0, 0
	for i, f := range in.GetFields() {
		if f.GetIsDynamic() {
			continue // the server adds $meta itself
		}
		if err := catalog.ValidateName("field", f.GetName()); err != nil {
			return nil, err
		}
		if names[f.GetName()] {
			return nil, errcode.Invalid("duplicated field name %q", f.GetName())
		}
		names[f.GetName()] = true
		nf := &schemapb.FieldSchema{
			FieldID: int64(100 + i), Name: f.GetName(), IsPrimaryKey: f.GetIsPrimaryKey(),
			Description: f.GetDescription(), DataType: f.GetDataType(), TypeParams: f.GetTypeParams(),
			IndexParams: f.GetIndexParams(), AutoID: f.GetAutoID(), ElementType: f.GetElementType(),
			DefaultValue: f.GetDefaultValue(), Nullable: f.GetNullable(),
			IsPartitionKey: f.GetIsPartitionKey(), IsClusteringKey: f.GetIsClusteringKey(),
		}
		if err := checkField(nf); err != nil {
			return nil, err
		}
		if err := checkMatchField(nf); err != nil {
			return nil, err
		}
		if nf.GetIsPrimaryKey() {
			pks++
			if in.GetAutoID() {
				nf.AutoID = true
			}
		} else if nf.GetAutoID() {
			return nil, errcode.Invalid("field %q: only the primary key field can be auto_id", nf.GetName())
		}
		if isVector(nf.GetDataType()) {
			vectors++
		}
		out.Fields = append(out.Fields, nf)
	}
	if pks == 0 {
		return nil, errcode.Invalid("schema of collection %q has no primary key field", in.GetName())
	}
	clustering := 0
	for _, f := range out.Fields {
		if !f.GetIsClusteringKey() {
			continue
		}
		clustering++
		switch f.GetDataType() {
		case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
			schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_VarChar:
		default:
			return nil, errcode.Invalid("field %q: a clustering key must be an integer, float or VarChar field", f.GetName())
		}
	}
	if clustering > 1 {
		return nil, errcode.Invalid("schema of collection %q has %d clustering key fields, only one is allowed", in.GetName(), clustering)
	}
	if pks > 1 {
		return nil, errcode.Invalid("schema of collection %q has %d primary key fields, only one is allowed", in.GetName(), pks)
	}
	if vectors == 0 {
		return nil, errcode.Invalid("schema does not contain vector field: invalid parameter[collection=%s]", in.GetName())
	}
	if vectors > limits.MaxVectorFields {
		return nil, errcode.Invalid("maximum vector field's number should be limited to %d", limits.MaxVectorFields)
	}
	if err := prepareFunctions(out); err != nil {
		return nil, err
	}
	for _, f := range out.Fields {
		if f.GetIsPrimaryKey() && f.GetAutoID() {
			out.AutoID = true
		}
	}
	if err := checkAnalyzers(out); err != nil {
		return nil, err
	}
	next := int64(100 + len(in.GetFields()))
	if out.GetEnableDynamicField() {
		out.Fields = append(out.Fields, &schemapb.FieldSchema{
			FieldID: next, Name: DynamicField,
			DataType: schemapb.DataType_JSON, IsDynamic: true, Description: "dynamic schema",
		})
		next++
	}
	if _, err := prepareStructFields(in, out, next); err != nil {
		return nil, err
	}
	out.Fields = append(out.Fields,
		&schemapb.FieldSchema{FieldID: 0, Name: RowIDField, DataType: schemapb.DataType_Int64, Description: "row id"},
		&schemapb.FieldSchema{FieldID: 1, Name: TimestampField, DataType: schemapb.DataType_Int64, Description: "time stamp"},
	)
	return out, nil
}

func isVector(t schemapb.DataType) bool {
	return t == schemapb.DataType_FloatVector || t == schemapb.DataType_BinaryVector ||
		t == schemapb.DataType_Float16Vector || t == schemapb.DataType_BFloat16Vector ||
		t == schemapb.DataType_SparseFloatVector || t == schemapb.DataType_Int8Vector
}

func checkField(f *schemapb.FieldSchema) error {
	name := f.GetName()
	if err := checkDefaultValue(f); err != nil {
		return err
	}
	switch t := f.GetDataType(); t {
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_JSON:
		if f.GetIsPrimaryKey() {
			return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", name)
		}
	case schemapb.DataType_Int64:
	case schemapb.DataType_Timestamptz:
		if err := checkTimestamptzField(f); err != nil {
			return err
		}
	case schemapb.DataType_VarChar:
		v, ok := typeParam(f, "max_length")
		if !ok {
			return errcode.Invalid("field %q: type param max_length should be specified for a VarChar field", name)
		}
		if err := checkMaxLength(name, v); err != nil {
			return err
		}
	case schemapb.DataType_Array:
		if f.GetIsPrimaryKey() {
			return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", name)
		}
		switch f.GetElementType() {
		case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
			schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double:
		case schemapb.DataType_VarChar:
			if v, ok := typeParam(f, "max_length"); !ok {
				return errcode.Invalid("field %q: type param max_length should be specified for an array of VarChar", name)
			} else if err := checkMaxLength(name, v); err != nil {
				return err
			}
		default:
			return errcode.Invalid("field %q: element type %s is not supported for arrays", name, f.GetElementType())
		}
		v, ok := typeParam(f, "max_capacity")
		if !ok {
			return errcode.Invalid("field %q: type param max_capacity should be specified for an array field", name)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return errcode.Invalid("field %q: max_capacity %q should be an integer in [1, %d]", name, v, MaxArrayCap)
		}
		if n <= 0 || n > MaxArrayCap {
			return errcode.Invalid("the maximum capacity specified for a Array should be in (0, %d]", MaxArrayCap)
		}
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		if err := checkDenseVector(f); err != nil {
			return err
		}
	case schemapb.DataType_SparseFloatVector:
		if err := checkSparseField(f); err != nil {
			return err
		}
	case schemapb.DataType_String:
		return errcode.Invalid("field %q: string data type not supported yet, please use VarChar type instead", name)
	case schemapb.DataType_Geometry:
		if err := checkGeometryField(f); err != nil {
			return err
		}
	default:
		return errcode.Invalid("field %q: data type %s is not supported", name, t)
	}
	return nil
}

// checkDenseVector checks a fixed-dimension vector field: not a primary key,
// no default value (it may be nullable), and a dim in [1, MaxDim] (for BinaryVector, a multiple of 8
// in [8, 8×MaxDim], as Milvus counts binary dimensions in bits).
func checkDenseVector(f *schemapb.FieldSchema) error {
	name := f.GetName()
	if f.GetIsPrimaryKey() {
		return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", name)
	}
	if err := checkVectorDefault(f); err != nil {
		return err
	}
	v, ok := typeParam(f, "dim")
	if !ok {
		return errcode.Invalid("field %q: dimension is not defined in field type params", name)
	}
	maxDim := MaxDim
	if f.GetDataType() == schemapb.DataType_BinaryVector {
		maxDim = 8 * MaxDim
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return errcode.Invalid("field %q: invalid dimension %q, it should be an integer in [1, %d]", name, v, maxDim)
	}
	binary := f.GetDataType() == schemapb.DataType_BinaryVector
	if n <= 0 || (n < 2 && !binary) {
		return errcode.Invalid("invalid dimension: %d. should be in range 2 ~ %d [field=%s]", n, maxDim, name)
	}
	if binary && n%8 != 0 {
		return errcode.Invalid("invalid dimension: %d of field %s. binary vector dimension should be multiple of 8. ", n, name)
	}
	if n > maxDim {
		kind := "float"
		if binary {
			kind = "binary"
		}
		return errcode.Invalid("invalid dimension: %d of field %s. %s vector dimension should be in range 2 ~ %d", n, name, kind, maxDim)
	}
	return nil
}

// checkMaxLength checks the max_length of a VarChar field or of VarChar
// array elements: in (0, MaxVarCharLen].
func checkMaxLength(field, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errcode.Invalid("field %q: max_length %q should be an integer in [1, %d]", field, v, MaxVarCharLen)
	}
	if n <= 0 || n > MaxVarCharLen {
		return errcode.InvalidParam("the maximum length specified for the field(%s) should be in (0, %d], but got %d instead",
			field, MaxVarCharLen, n)
	}
	return nil
}

// KeyPartitionName is the name of the i-th partition of a partition-key
// collection, as Milvus names it: `_default_<i>`.
func KeyPartitionName(i int) string {
	return DefaultPartName + "_" + strconv.Itoa(i)
}
