package rest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/distance"
)

// Byte vectors over REST, as Milvus REST v2 takes and returns them:
//
//   - BinaryVector: an array of dim/8 byte values (0..255) or a base64 string
//     of the packed bits;
//   - Float16Vector and BFloat16Vector: an array of dim numbers (converted
//     with round-to-nearest-even) or a base64 string of the little-endian
//     half-precision values;
//   - Int8Vector: an array of dim integers in [-128, 127] (or a base64
//     string of the bytes).
//
// Output (query, get, search) is base64 for binary and half-precision
// vectors, as in Milvus, and an array of integers for int8 vectors.

// byteVectorWidth is the number of bytes of one vector of type t.
func byteVectorWidth(t schemapb.DataType, dim int) int {
	switch t {
	case schemapb.DataType_BinaryVector:
		return dim / 8
	case schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector:
		return 2 * dim
	}
	return dim
}

// byteVector converts one REST value of a byte vector field of type t into
// its wire bytes.
func byteVector(t schemapb.DataType, dim int, v any) ([]byte, error) {
	w := byteVectorWidth(t, dim)
	var out []byte
	switch x := v.(type) {
	case string:
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, fmt.Errorf("the %s is neither an array nor base64: %w", t, err)
		}
		out = b
	case []any:
		switch t {
		case schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector:
			if len(x) != dim {
				return nil, fmt.Errorf("the vector has %d dimensions, the field has %d", len(x), dim)
			}
			fs := make([]float32, dim)
			for j, e := range x {
				f, err := toFloat(e)
				if err != nil {
					return nil, err
				}
				fs[j] = float32(f)
			}
			out = make([]byte, w)
			if t == schemapb.DataType_Float16Vector {
				distance.EncodeFloat16(out, fs)
			} else {
				distance.EncodeBFloat16(out, fs)
			}
		default:
			lo, hi := int64(0), int64(255)
			if t == schemapb.DataType_Int8Vector {
				lo, hi = -128, 127
			}
			out = make([]byte, len(x))
			for j, e := range x {
				n, err := toInt(e, 64)
				if err != nil || n < lo || n > hi {
					return nil, fmt.Errorf("element %d (%v) of the %s is not an integer in [%d, %d]", j, e, t, lo, hi)
				}
				out[j] = byte(n)
			}
		}
	default:
		return nil, fmt.Errorf("the %s is neither an array nor a base64 string", t)
	}
	if len(out) != w {
		return nil, fmt.Errorf("the %s has %d bytes, dim %d needs %d", t, len(out), dim, w)
	}
	return out, nil
}

// byteVectorCell renders row i of a byte vector column: base64 for binary and
// half-precision vectors, integers for int8 vectors.
func byteVectorCell(raw []byte, w, i int, int8s bool) (any, error) {
	if (i+1)*w > len(raw) {
		return nil, fmt.Errorf("the column is shorter than the result")
	}
	row := raw[i*w : (i+1)*w]
	if !int8s {
		return base64.StdEncoding.EncodeToString(row), nil
	}
	out := make([]int, w)
	for j, b := range row {
		out[j] = int(int8(b))
	}
	return out, nil
}

// bytePlaceholder converts the REST query vectors of a byte vector field
// into a placeholder value of the field's own type.
func bytePlaceholder(field *schemapb.FieldSchema, data []json.RawMessage) (*commonpb.PlaceholderValue, error) {
	t := field.GetDataType()
	dim, _ := strconv.Atoi(typeParam(field, "dim"))
	ph := &commonpb.PlaceholderValue{Tag: "$0"}
	switch t {
	case schemapb.DataType_BinaryVector:
		ph.Type = commonpb.PlaceholderType_BinaryVector
	case schemapb.DataType_Float16Vector:
		ph.Type = commonpb.PlaceholderType_Float16Vector
	case schemapb.DataType_BFloat16Vector:
		ph.Type = commonpb.PlaceholderType_BFloat16Vector
	default:
		ph.Type = commonpb.PlaceholderType_Int8Vector
	}
	for i, raw := range data {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, errorf(errcode.IncorrectParameterFormat, "data[%d]: %v", i, err)
		}
		b, err := byteVector(t, dim, v)
		if err != nil {
			return nil, errorf(errcode.IncorrectParameterFormat, "data[%d]: %v", i, err)
		}
		ph.Values = append(ph.Values, b)
	}
	return ph, nil
}
