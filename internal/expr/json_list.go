package expr

import (
	"bytes"
	"encoding/json"
)

// jsonListEqPred is a JSON value compared with a list literal (== or !=),
// as Milvus allows: equal when the value is an array of the same length
// whose elements equal the literal's in order (numbers by value, strings,
// bools, nested lists alike). A missing or non-array value is not equal.
type jsonListEqPred struct {
	ref  *jsonRef
	want value
	ne   bool
}

func (p *jsonListEqPred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *jsonListEqPred) String() string {
	op := " == "
	if p.ne {
		op = " != "
	}
	return p.ref.String() + op + p.want.String()
}

func (p *jsonListEqPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	valid, err := p.ref.each(c, func(i int, raw []byte) {
		eq := false
		if jsonKind(raw) == vkList {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) == nil {
				eq = jsonEqualsValue(v, p.want)
			}
		}
		out[i] = eq != p.ne
	})
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}

// jsonEqualsValue reports whether a decoded JSON value (UseNumber) equals
// a literal.
func jsonEqualsValue(v any, want value) bool {
	switch x := v.(type) {
	case json.Number:
		if !want.isNumber() {
			return false
		}
		if want.k == vkInt {
			if n, err := x.Int64(); err == nil {
				return n == want.i
			}
		}
		f, err := x.Float64()
		return err == nil && f == want.asFloat()
	case string:
		return want.k == vkString && x == want.s
	case bool:
		return want.k == vkBool && x == want.b
	case []any:
		if want.k != vkList || len(x) != len(want.l) {
			return false
		}
		for i := range x {
			if !jsonEqualsValue(x[i], want.l[i]) {
				return false
			}
		}
		return true
	}
	return false
}
