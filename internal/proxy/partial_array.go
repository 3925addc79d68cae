package proxy

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// mergeArrayOp builds the column of ARRAY field f that carries an
// ARRAY_APPEND or ARRAY_REMOVE op: for a stored key, the op applied to the
// stored array (a null payload keeps the stored value; a null stored array
// counts as empty); for a new key, the payload as sent. An append whose
// result is longer than max_capacity fails the request.
func mergeArrayOp(f *schemapb.FieldSchema, op schemapb.FieldPartialUpdateOp_OpType, sent, stored column.Column, at []int) (column.Column, error) {
	payload, ok := sent.(*column.Arrays)
	if !ok {
		return nil, errcode.InvalidParam("partial-update op targets field %q not present in fields_data", f.GetName())
	}
	base, _ := stored.(*column.Arrays) // nil when no key was stored
	capacity := typeParamInt(f, "max_capacity")
	out := &column.Arrays{Elem: f.GetElementType(), Data: make([]*schemapb.ScalarField, len(at))}
	if f.GetNullable() {
		out.Valid = make([]bool, len(at))
	}
	for i, j := range at {
		if j >= 0 && base == nil {
			return nil, errcode.New(errcode.Unexpected, "field %q: the stored rows read for the partial update do not hold the field", f.GetName())
		}
		var value *schemapb.ScalarField
		valid := true
		switch {
		case j < 0: // a new key: the payload as sent
			value, valid = payload.Data[i], !payload.IsNull(i)
		case payload.IsNull(i): // no payload: the stored value stays
			value, valid = base.Data[j], !base.IsNull(j)
		default:
			var prev *schemapb.ScalarField
			if !base.IsNull(j) {
				prev = base.Data[j]
			}
			merged, err := applyArrayOp(op, f.GetElementType(), prev, payload.Data[i])
			if err != nil {
				return nil, errcode.InvalidParam("field %q: %v", f.GetName(), err)
			}
			if l := column.ScalarLen(merged); op == schemapb.FieldPartialUpdateOp_ARRAY_APPEND && capacity > 0 && l > capacity {
				return nil, errcode.New(codeUnknown, "field %q: array length %d exceeds max_capacity %d", f.GetName(), l, capacity)
			}
			value = merged
		}
		out.Data[i] = value
		if out.Valid != nil {
			out.Valid[i] = valid
		}
	}
	return out, nil
}

// errArrayElement is the error for an array op on an element type it does
// not support.
type errArrayElement schemapb.DataType

func (e errArrayElement) Error() string {
	return "array operations do not support elements of type " + schemapb.DataType(e).String()
}

// applyArrayOp applies ARRAY_APPEND (base then payload, duplicates kept) or
// ARRAY_REMOVE (base without every element equal to one of the payload's,
// order kept; float equality is IEEE, so NaN removes nothing) to one array
// value of element type elem. A nil base is an empty array. The result
// shares no slice with base or payload.
func applyArrayOp(op schemapb.FieldPartialUpdateOp_OpType, elem schemapb.DataType, base, payload *schemapb.ScalarField) (*schemapb.ScalarField, error) {
	switch elem {
	case schemapb.DataType_Bool:
		d := combine(op, base.GetBoolData().GetData(), payload.GetBoolData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_BoolData{BoolData: &schemapb.BoolArray{Data: d}}}, nil
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32:
		d := combine(op, base.GetIntData().GetData(), payload.GetIntData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: d}}}, nil
	case schemapb.DataType_Int64:
		d := combine(op, base.GetLongData().GetData(), payload.GetLongData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: d}}}, nil
	case schemapb.DataType_Float:
		d := combine(op, base.GetFloatData().GetData(), payload.GetFloatData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_FloatData{FloatData: &schemapb.FloatArray{Data: d}}}, nil
	case schemapb.DataType_Double:
		d := combine(op, base.GetDoubleData().GetData(), payload.GetDoubleData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_DoubleData{DoubleData: &schemapb.DoubleArray{Data: d}}}, nil
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		d := combine(op, base.GetStringData().GetData(), payload.GetStringData().GetData())
		return &schemapb.ScalarField{Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: d}}}, nil
	}
	return nil, errArrayElement(elem)
}

// combine is applyArrayOp on Go slices.
func combine[T comparable](op schemapb.FieldPartialUpdateOp_OpType, base, payload []T) []T {
	out := make([]T, 0, len(base)+len(payload))
	if op == schemapb.FieldPartialUpdateOp_ARRAY_APPEND {
		return append(append(out, base...), payload...)
	}
	drop := make(map[T]struct{}, len(payload))
	for _, v := range payload {
		drop[v] = struct{}{}
	}
	for _, v := range base {
		if _, found := drop[v]; !found {
			out = append(out, v)
		}
	}
	return out
}
