package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/sparse"
)

// sparseRow converts a sparse vector given in JSON to the wire row, as
// Milvus REST does. Two forms are accepted: an object of index → value
// ({"3": 0.5, "17": 1.2}) and {"indices": [3, 17], "values": [0.5, 1.2]}.
// Indices need not be sorted; the row is sorted, then validated like any
// inserted row (sparse.Validate). An empty object is an empty row.
func sparseRow(v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`a sparse vector is an object of index to value, or {"indices": [...], "values": [...]}`)
	}
	var vec sparse.Vector
	idxList, hasIdx := m["indices"]
	valList, hasVal := m["values"]
	switch {
	case hasIdx && hasVal:
		is, ok1 := idxList.([]any)
		vs, ok2 := valList.([]any)
		if !ok1 || !ok2 || len(m) != 2 {
			return nil, errors.New(`"indices" and "values" should be the only keys, both arrays`)
		}
		if len(is) != len(vs) {
			return nil, fmt.Errorf("%d indices and %d values", len(is), len(vs))
		}
		for i := range is {
			idx, err := sparseIndex(is[i])
			if err != nil {
				return nil, err
			}
			val, err := sparseValue(vs[i])
			if err != nil {
				return nil, err
			}
			vec.Indices = append(vec.Indices, idx)
			vec.Values = append(vec.Values, val)
		}
	case hasIdx || hasVal:
		return nil, errors.New(`a sparse vector needs both "indices" and "values"`)
	default:
		for k, x := range m {
			idx, err := sparseIndex(json.Number(k))
			if err != nil {
				return nil, err
			}
			val, err := sparseValue(x)
			if err != nil {
				return nil, err
			}
			vec.Indices = append(vec.Indices, idx)
			vec.Values = append(vec.Values, val)
		}
	}
	sort.Sort(byIndex(vec))
	row := vec.Encode()
	if err := sparse.Validate(row); err != nil {
		return nil, err
	}
	return row, nil
}

// byIndex sorts a vector's pairs by index.
type byIndex sparse.Vector

func (b byIndex) Len() int           { return len(b.Indices) }
func (b byIndex) Less(i, j int) bool { return b.Indices[i] < b.Indices[j] }
func (b byIndex) Swap(i, j int) {
	b.Indices[i], b.Indices[j] = b.Indices[j], b.Indices[i]
	b.Values[i], b.Values[j] = b.Values[j], b.Values[i]
}

func sparseIndex(v any) (uint32, error) {
	s := fmt.Sprint(v)
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || n > sparse.MaxIndex {
		return 0, fmt.Errorf("invalid sparse vector index %q: it should be an integer in [0, 2^32-2]", s)
	}
	return uint32(n), nil
}

func sparseValue(v any) (float32, error) {
	f, err := toFloat(v)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
		return 0, fmt.Errorf("invalid sparse vector value %v", f)
	}
	return float32(f), nil
}

// sparseJSON renders row i of a sparse column as Milvus REST does: an
// object of index → value.
func sparseJSON(d *schemapb.SparseFloatArray, i int) (any, error) {
	if i >= len(d.GetContents()) {
		return nil, errors.New("the column is shorter than the result")
	}
	v := sparse.Decode(d.GetContents()[i])
	out := make(map[string]float64, len(v.Indices))
	for j, idx := range v.Indices {
		out[strconv.FormatUint(uint64(idx), 10)] = finite(float64(v.Values[j]))
	}
	return out, nil
}

// sparsePlaceholder adds query vector i, a sparse vector in JSON, to ph.
func sparsePlaceholder(ph *commonpb.PlaceholderValue, i int, raw json.RawMessage) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errorf(errcode.IncorrectParameterFormat, "data[%d] is not a sparse vector: %v", i, err)
	}
	row, err := sparseRow(v)
	if err != nil {
		return errorf(errcode.IncorrectParameterFormat, "data[%d]: %v", i, err)
	}
	ph.Type = commonpb.PlaceholderType_SparseFloatVector
	ph.Values = append(ph.Values, row)
	return nil
}
