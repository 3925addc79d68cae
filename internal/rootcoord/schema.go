package rootcoord

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// Limits on schemas and the catalog, at Milvus 2.6's defaults.
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
	MaxNameLength = 255
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

// ValidateName checks a collection, alias, partition, field or database
// name as Milvus does: at most MaxNameLength bytes, a letter or an underscore
// first (partitions may also start with a digit), then letters, digits and
// underscores (partitions may also hold '-'). A partition name is judged
// with surrounding blanks trimmed, and a field may not be named by a
// filter-language keyword (FieldNameKeyword). The errors carry Milvus's codes
// and messages: 1100 for collections, aliases and partitions, 1701 for
// fields, 802 for databases.
func ValidateName(kind, name string) error {
	switch kind {
	case "collection", "alias":
		return validateCollectionName(kind, name)
	case "partition":
		return validatePartitionName(name)
	case "field":
		return validateFieldName(name)
	case "database":
		return validateDatabaseName(name)
	}
	return validateCollectionName(kind, name)
}

// nameProblem names what is wrong with name, or "" when nothing is: too
// long, a bad first character, or a bad later character.
func nameProblem(name string, firstDigit, dash bool) string {
	if len(name) > MaxNameLength {
		return "length"
	}
	c := name[0]
	if c != '_' && !isLetter(c) && (!firstDigit || !isDigit(c)) {
		return "first"
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if c != '_' && !isLetter(c) && !isDigit(c) && (!dash || c != '-') {
			return "chars"
		}
	}
	return ""
}

func validateCollectionName(kind, name string) error {
	entity := "name"
	if kind == "alias" {
		entity = "alias"
	}
	if name == "" {
		return errcode.InvalidParam("collection %s should not be empty", entity)
	}
	invalid := fmt.Sprintf("Invalid collection %s: %s.", entity, name) // then " the reason", one space as Milvus 2.6 words it
	switch nameProblem(name, false, false) {
	case "length":
		return errcode.InvalidParam("%s the length of a collection %s must be less than %d characters", invalid, entity, MaxNameLength)
	case "first":
		return errcode.InvalidParam("%s the first character of a collection %s must be an underscore or letter", invalid, entity)
	case "chars":
		return errcode.InvalidParam("%s collection %s can only contain numbers, letters and underscores", invalid, entity)
	}
	return nil
}

func validatePartitionName(name string) error {
	name = strings.TrimSpace(name) // Milvus judges the trimmed name
	invalid := "Invalid partition name: " + name + ". "
	if name == "" {
		return errcode.Invalid("%sPartition name should not be empty.", invalid)
	}
	switch nameProblem(name, true, true) {
	case "length":
		return errcode.Invalid("%sThe length of a partition name must be less than %d characters.", invalid, MaxNameLength)
	case "first":
		return errcode.Invalid("%sThe first character of a partition name must be an underscore or letter.", invalid)
	case "chars":
		return errcode.Invalid("%sPartition name can only contain numbers, letters and underscores.", invalid)
	}
	return nil
}

func validateFieldName(name string) error {
	bad := func(msg string) error {
		return errcode.New(errcode.FieldInvalidName, "%s: field name invalid[field=%s]", msg, name)
	}
	if strings.TrimSpace(name) == "" {
		return bad("field name should not be empty")
	}
	invalid := "Invalid field name: " + name + ". "
	switch nameProblem(name, false, false) {
	case "length":
		return bad(fmt.Sprintf("%sThe length of a field name must be less than %d characters.", invalid, MaxNameLength))
	case "first":
		return bad(invalid + "The first character of a field name must be an underscore or letter.")
	case "chars":
		return bad(invalid + "Field name can only contain numbers, letters, and underscores.")
	}
	if FieldNameKeyword(name) {
		return bad(fmt.Sprintf("%s%s is keyword in milvus.", invalid, name))
	}
	return nil
}

// fieldNameKeywords are the words of the filter language that Milvus 2.6
// refuses as field names, in the casings it refuses (common.FieldNameKeywords):
// a field so named could not be told apart from the operator in a filter.
var fieldNameKeywords = map[string]bool{
	"$meta": true, "like": true, "exists": true, "EXISTS": true,
	"and": true, "or": true, "not": true, "in": true,
	"json_contains": true, "JSON_CONTAINS": true,
	"json_contains_all": true, "JSON_CONTAINS_ALL": true,
	"json_contains_any": true, "JSON_CONTAINS_ANY": true,
	"array_contains": true, "ARRAY_CONTAINS": true,
	"array_contains_all": true, "ARRAY_CONTAINS_ALL": true,
	"array_contains_any": true, "ARRAY_CONTAINS_ANY": true,
	"array_length": true, "ARRAY_LENGTH": true,
	"true": true, "True": true, "TRUE": true,
	"false": true, "False": true, "FALSE": true,
	"text_match": true, "TEXT_MATCH": true,
	"phrase_match": true, "PHRASE_MATCH": true,
	"random_sample": true, "RANDOM_SAMPLE": true,
}

// FieldNameKeyword reports whether name is a filter-language keyword that
// cannot name a field ("like", "and", "json_contains", "TRUE", ...), matched
// in the casings Milvus 2.6 lists.
func FieldNameKeyword(name string) bool { return fieldNameKeywords[name] }

func validateDatabaseName(name string) error {
	bad := func(msg string) error {
		return errcode.New(errcode.DatabaseInvalidName, "%s: invalid database name[database=%s]", msg, name)
	}
	if name == "" {
		return bad("database name couldn't be empty")
	}
	switch nameProblem(name, false, false) {
	case "length":
		return bad(fmt.Sprintf("the length of a database name must be less than %d characters", MaxNameLength))
	case "first":
		return bad("the first character of a database name must be an underscore or letter")
	case "chars":
		return bad("database name can only contain numbers, letters and underscores")
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

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
	if err := ValidateName("collection", in.GetName()); err != nil {
		return nil, err
	}
	if len(in.GetFields()) == 0 {
		return nil, errcode.Invalid("schema of collection %q has no fields", in.GetName())
	}
	if len(in.GetFields()) > MaxFields {
		return nil, errcode.Invalid("maximum field's number should be limited to %d", MaxFields)
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
		if err := ValidateName("field", f.GetName()); err != nil {
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
	if vectors > MaxVectorFields {
		return nil, errcode.Invalid("maximum vector field's number should be limited to %d", MaxVectorFields)
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
		out.Fields = append(out.Fields, &schemapb.FieldSchema{FieldID: next, Name: DynamicField,
			DataType: schemapb.DataType_JSON, IsDynamic: true, Description: "dynamic schema"})
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
