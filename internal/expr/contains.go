package expr

import (
	"math"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// containsMode selects array_contains, array_contains_all or array_contains_any.
type containsMode uint8

const (
	containsOne containsMode = iota
	containsAll
	containsAny
)

func (m containsMode) String() string {
	return [...]string{"array_contains", "array_contains_all", "array_contains_any"}[m]
}

// arrayContainsPred tests Array field rows for elements. Values have been
// converted to the element type at compile time; values that can never match
// (1.5 for an integer array) are dropped, so all-mode tracks need separately.
type arrayContainsPred struct {
	arr   *arrayRef
	mode  containsMode
	arg   value // as written, for String
	ints  []int64
	flts  []float64
	strs  []string
	bools []bool
	// impossible is set when an all-mode value can never match.
	impossible bool
}

func (p *arrayContainsPred) addFields(add func(int64)) { add(p.arr.fid) }
func (p *arrayContainsPred) String() string {
	return p.mode.String() + "(" + p.arr.name + ", " + p.arg.String() + ")"
}

// containsT reports whether row holds one or all of want.
func containsT[T comparable](row []T, want []T, all bool) bool {
	if all {
		for _, w := range want {
			found := false
			for _, x := range row {
				if x == w {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	for _, x := range row {
		for _, w := range want {
			if x == w {
				return true
			}
		}
	}
	return false
}

func widen[T int32 | float32, U int64 | float64](xs []T) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = U(x)
	}
	return out
}

func (p *arrayContainsPred) eval(c *evalCtx) (boolVec, error) {
	if bv, ok := p.evalIndex(c); ok {
		return bv, nil
	}
	col, err := p.arr.col(c)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	all := p.mode == containsAll
	if all && p.impossible {
		return boolVec{val: out, valid: col.Valid}, nil
	}
	for i, a := range col.Data {
		if col.IsNull(i) || a == nil {
			continue
		}
		switch d := a.GetData().(type) {
		case *schemapb.ScalarField_LongData:
			out[i] = containsT(d.LongData.GetData(), p.ints, all)
		case *schemapb.ScalarField_IntData:
			out[i] = containsT(widen[int32, int64](d.IntData.GetData()), p.ints, all)
		case *schemapb.ScalarField_FloatData:
			out[i] = containsT(widen[float32, float64](d.FloatData.GetData()), p.flts, all)
		case *schemapb.ScalarField_DoubleData:
			out[i] = containsT(d.DoubleData.GetData(), p.flts, all)
		case *schemapb.ScalarField_StringData:
			out[i] = containsT(d.StringData.GetData(), p.strs, all)
		case *schemapb.ScalarField_BoolData:
			out[i] = containsT(d.BoolData.GetData(), p.bools, all)
		}
	}
	return mask(out, col.Valid), nil
}

// jsonContainsPred tests JSON arrays for elements, comparing by JSON value.
type jsonContainsPred struct {
	ref  *jsonRef
	mode containsMode
	arg  value
	want []value
}

func (p *jsonContainsPred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *jsonContainsPred) String() string {
	return "json_" + p.mode.String()[len("array_"):] + "(" + p.ref.String() + ", " + p.arg.String() + ")"
}

func (p *jsonContainsPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	all := p.mode == containsAll
	valid, err := p.ref.each(c, func(i int, raw []byte) {
		if raw == nil || raw[0] != '[' {
			return
		}
		var found []bool
		if all {
			found = make([]bool, len(p.want))
		}
		hit := false
		ok := jsonElems(raw, func(e []byte) bool {
			v, good := decodeValue(e, 0)
			if !good {
				return true
			}
			for k, w := range p.want {
				if equalValues(v, w) {
					if !all {
						hit = true
						return false
					}
					found[k] = true
				}
			}
			return true
		})
		if !ok {
			return
		}
		if all {
			hit = true
			for _, f := range found {
				hit = hit && f
			}
		}
		out[i] = hit
	})
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}

// roundFloat32 rounds constants compared with Float (32-bit) data, so that
// "f == 1.1" matches the stored float32(1.1).
func roundFloat32(f float64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > math.MaxFloat32 {
		return f
	}
	return float64(float32(f))
}

// arrayEqPred is `arr == [..]` (or !=): the row's elements equal the list's,
// in order. The list is converted to the element type as array_contains
// converts it; a value that can never be an element (1.5 for an integer
// array) makes every row unequal.
type arrayEqPred struct {
	want *arrayContainsPred
	ne   bool
}

func (p *arrayEqPred) addFields(add func(int64)) { add(p.want.arr.fid) }
func (p *arrayEqPred) String() string {
	op := " == "
	if p.ne {
		op = " != "
	}
	return p.want.arr.name + op + p.want.arg.String()
}

func equalT[T comparable](row, want []T) bool {
	if len(row) != len(want) {
		return false
	}
	for i := range row {
		if row[i] != want[i] {
			return false
		}
	}
	return true
}

func (p *arrayEqPred) eval(c *evalCtx) (boolVec, error) {
	col, err := p.want.arr.col(c)
	if err != nil {
		return boolVec{}, err
	}
	w := p.want
	out := make([]bool, c.n)
	for i, a := range col.Data {
		if col.IsNull(i) || a == nil {
			continue
		}
		eq := false
		if !w.impossible {
			switch d := a.GetData().(type) {
			case *schemapb.ScalarField_LongData:
				eq = equalT(d.LongData.GetData(), w.ints)
			case *schemapb.ScalarField_IntData:
				eq = equalT(widen[int32, int64](d.IntData.GetData()), w.ints)
			case *schemapb.ScalarField_FloatData:
				eq = equalT(widen[float32, float64](d.FloatData.GetData()), w.flts)
			case *schemapb.ScalarField_DoubleData:
				eq = equalT(d.DoubleData.GetData(), w.flts)
			case *schemapb.ScalarField_StringData:
				eq = equalT(d.StringData.GetData(), w.strs)
			case *schemapb.ScalarField_BoolData:
				eq = equalT(d.BoolData.GetData(), w.bools)
			}
		}
		out[i] = eq != p.ne
	}
	return mask(out, col.Valid), nil
}
