package rootcoord

import (
	"math"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/errcode"
)

// checkDefaultValue checks a field's nullable flag and default_value as
// Milvus 2.6 does when a collection is created: a primary or partition key
// is never nullable; a default is never on the primary key, a vector, an Array or
// a (non-dynamic) JSON field; of the wire type that matches the field type;
// within range for Int8/Int16; no longer than max_length for VarChar.
// A Timestamptz default arrives as an ISO string and is parsed later, in
// the collection's time zone (see resolveTimestamptzDefaults).
func checkDefaultValue(f *schemapb.FieldSchema) error {
	if f.GetNullable() && f.GetIsPrimaryKey() {
		return errcode.InvalidParam("primary field not support null, type:%s, name:%s", f.GetDataType(), f.GetName())
	}
	if f.GetNullable() && f.GetIsPartitionKey() {
		return errcode.InvalidParam("partition key field not support nullable")
	}
	dv := f.GetDefaultValue()
	if dv == nil {
		return nil
	}
	dt := f.GetDataType()
	if f.GetIsPrimaryKey() {
		return errcode.InvalidParam("primary field not support default_value, type:%s, name:%s", dt, f.GetName())
	}
	if dt == schemapb.DataType_Array || isVector(dt) || dt == schemapb.DataType_JSON && !f.GetIsDynamic() {
		return errcode.InvalidParam("type not support default_value, type:%s, name:%s", dt, f.GetName())
	}
	mismatch := func(got string) error {
		return errcode.InvalidParam("type (%s) of field (%s) is not equal to the type(%s) of default_value", dt, f.GetName(), got)
	}
	switch dv.GetData().(type) {
	case *schemapb.ValueField_BoolData:
		if dt != schemapb.DataType_Bool {
			return mismatch("DataType_Bool")
		}
	case *schemapb.ValueField_IntData:
		if dt != schemapb.DataType_Int32 && dt != schemapb.DataType_Int16 && dt != schemapb.DataType_Int8 {
			return mismatch("DataType_Int")
		}
		v := dv.GetIntData()
		if dt == schemapb.DataType_Int16 && (v > math.MaxInt16 || v < math.MinInt16) {
			return outOfRange(math.MinInt16, math.MaxInt16, v)
		}
		if dt == schemapb.DataType_Int8 && (v > math.MaxInt8 || v < math.MinInt8) {
			return outOfRange(math.MinInt8, math.MaxInt8, v)
		}
	case *schemapb.ValueField_LongData:
		if dt != schemapb.DataType_Int64 {
			return mismatch("DataType_Int64")
		}
	case *schemapb.ValueField_FloatData:
		if dt != schemapb.DataType_Float {
			return mismatch("DataType_Float")
		}
	case *schemapb.ValueField_DoubleData:
		if dt != schemapb.DataType_Double {
			return mismatch("DataType_Double")
		}
	case *schemapb.ValueField_TimestamptzData:
		if dt != schemapb.DataType_Timestamptz {
			return mismatch("DataType_Timestamptz")
		}
	case *schemapb.ValueField_StringData:
		switch dt {
		case schemapb.DataType_VarChar:
			if v, ok := typeParam(f, "max_length"); ok {
				if maxLen, err := strconv.Atoi(v); err == nil && len(dv.GetStringData()) > maxLen {
					return errcode.Invalid("the length (%d) of string exceeds max length (%d): invalid parameter"+
						"[expected=valid length string][actual=string length exceeds max length]", len(dv.GetStringData()), maxLen)
				}
			}
		case schemapb.DataType_Timestamptz, schemapb.DataType_Geometry: // ISO text; WKT, checked by checkGeometryField
		default:
			return mismatch("DataType_VarChar")
		}
	case *schemapb.ValueField_BytesData:
		if dt != schemapb.DataType_JSON {
			return mismatch("DataType_JSON")
		}
	default:
		return errcode.InvalidParam("field %s: the default value has no data", f.GetName())
	}
	return nil
}

func outOfRange(lo, hi, v int32) error {
	return errcode.Invalid("default value out of range: invalid parameter[%d out of range %d <= value <= %d]", v, lo, hi)
}
