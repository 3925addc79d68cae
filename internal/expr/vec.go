package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/strata-db/strata/internal/column"
)

// vtype is the element type of a value vector.
type vtype uint8

const (
	tyInt vtype = iota
	tyFloat
	tyString
	tyBool
)

func (t vtype) String() string {
	return [...]string{"integer", "float", "string", "bool"}[t]
}

func (t vtype) numeric() bool { return t == tyInt || t == tyFloat }

// vec is one column-shaped intermediate result. Only the slice matching t is
// set; valid is nil when every row holds a value. Values at invalid rows are
// unspecified. A vec may alias batch memory and must not be modified.
type vec struct {
	t      vtype
	ints   []int64
	floats []float64
	strs   []string
	bools  []bool
	valid  []bool
}

// floatsOf returns v's values as float64 (copying when v is an int vector).
func (v vec) floatsOf() []float64 {
	if v.t == tyFloat {
		return v.floats
	}
	out := make([]float64, len(v.ints))
	for i, x := range v.ints {
		out[i] = float64(x)
	}
	return out
}

// evalCtx is the per-Eval state shared by all operators.
type evalCtx struct {
	b Batch
	n int
}

// column fetches field fid from the batch and checks its length.
func (c *evalCtx) column(fid int64, name string) (column.Column, error) {
	col := c.b.Column(fid)
	if col == nil {
		return nil, fmt.Errorf("expr: batch has no column for field %s (id %d)", name, fid)
	}
	if col.Len() != c.n {
		return nil, fmt.Errorf("expr: column for field %s has %d rows, batch has %d", name, col.Len(), c.n)
	}
	return col, nil
}

func wrongColumn(name string, col column.Column, want string) error {
	return fmt.Errorf("expr: column for field %s is %T, want %s", name, col, want)
}

// valNode is a compiled operator producing a value vector.
type valNode interface {
	typ() vtype
	eval(c *evalCtx) (vec, error)
	addFields(add func(int64))
	String() string
}

// colNode reads a scalar field without copying.
type colNode struct {
	fid  int64
	name string
	dt   schemapb.DataType
	t    vtype
}

func (n *colNode) typ() vtype                { return n.t }
func (n *colNode) String() string            { return n.name }
func (n *colNode) addFields(add func(int64)) { add(n.fid) }

func (n *colNode) eval(c *evalCtx) (vec, error) {
	col, err := c.column(n.fid, n.name)
	if err != nil {
		return vec{}, err
	}
	switch n.t {
	case tyInt:
		if x, ok := col.(*column.Ints); ok {
			return vec{t: tyInt, ints: x.Data, valid: x.Valid}, nil
		}
		return vec{}, wrongColumn(n.name, col, "*column.Ints")
	case tyFloat:
		if x, ok := col.(*column.Floats); ok {
			return vec{t: tyFloat, floats: x.Data, valid: x.Valid}, nil
		}
		return vec{}, wrongColumn(n.name, col, "*column.Floats")
	case tyString:
		if x, ok := col.(*column.Strings); ok {
			return vec{t: tyString, strs: x.Data, valid: x.Valid}, nil
		}
		return vec{}, wrongColumn(n.name, col, "*column.Strings")
	default:
		if x, ok := col.(*column.Bools); ok {
			return vec{t: tyBool, bools: x.Data, valid: x.Valid}, nil
		}
		return vec{}, wrongColumn(n.name, col, "*column.Bools")
	}
}

// constNode broadcasts a numeric constant inside arithmetic.
type constNode struct{ v value }

func (n *constNode) typ() vtype {
	if n.v.k == vkInt {
		return tyInt
	}
	return tyFloat
}
func (n *constNode) String() string        { return n.v.String() }
func (n *constNode) addFields(func(int64)) {}
func (n *constNode) eval(c *evalCtx) (vec, error) {
	if n.v.k == vkInt {
		out := make([]int64, c.n)
		for i := range out {
			out[i] = n.v.i
		}
		return vec{t: tyInt, ints: out}, nil
	}
	out := make([]float64, c.n)
	for i := range out {
		out[i] = n.v.f
	}
	return vec{t: tyFloat, floats: out}, nil
}

// andMask combines two validity masks (nil = all valid) into a new one.
func andMask(a, b []bool) []bool {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return append([]bool(nil), b...)
	case b == nil:
		return append([]bool(nil), a...)
	}
	out := make([]bool, len(a))
	for i := range out {
		out[i] = a[i] && b[i]
	}
	return out
}

// ownMask returns a writable copy of m, materialising nil as all valid.
func ownMask(m []bool, n int) []bool {
	out := make([]bool, n)
	if m == nil {
		for i := range out {
			out[i] = true
		}
		return out
	}
	copy(out, m)
	return out
}

// arithNode is a binary arithmetic or bitwise operator over two vectors.
type arithNode struct {
	op   tokKind
	l, r valNode
	t    vtype
}

func (n *arithNode) typ() vtype { return n.t }
func (n *arithNode) String() string {
	return "(" + n.l.String() + " " + n.op.String() + " " + n.r.String() + ")"
}
func (n *arithNode) addFields(add func(int64)) { n.l.addFields(add); n.r.addFields(add) }

func (n *arithNode) eval(c *evalCtx) (vec, error) {
	a, err := n.l.eval(c)
	if err != nil {
		return vec{}, err
	}
	if k, ok := n.r.(*constNode); ok && n.t == tyInt && a.t == tyInt {
		// Common case "field op constant": no broadcast of the constant.
		if out, ok := intArithConst(n.op, a.ints, k.v.i); ok {
			return vec{t: tyInt, ints: out, valid: a.valid}, nil
		}
	}
	b, err := n.r.eval(c)
	if err != nil {
		return vec{}, err
	}
	valid := andMask(a.valid, b.valid)
	if n.t == tyInt {
		out, bad := intArith(n.op, a.ints, b.ints)
		if bad != nil {
			valid = applyBad(valid, bad, c.n)
		}
		return vec{t: tyInt, ints: out, valid: valid}, nil
	}
	out, bad := floatArith(n.op, a.floatsOf(), b.floatsOf())
	if bad != nil {
		valid = applyBad(valid, bad, c.n)
	}
	return vec{t: tyFloat, floats: out, valid: valid}, nil
}

// applyBad clears the validity of rows whose operation was undefined.
func applyBad(valid []bool, bad []int, n int) []bool {
	if valid == nil {
		valid = ownMask(nil, n)
	}
	for _, i := range bad {
		valid[i] = false
	}
	return valid
}

// intArith applies op element-wise; rows with an undefined result (division
// by zero, negative shift) are returned in bad.
func intArith(op tokKind, a, b []int64) ([]int64, []int) {
	out := make([]int64, len(a))
	var bad []int
	switch op {
	case tAdd:
		for i := range out {
			out[i] = a[i] + b[i]
		}
	case tSub:
		for i := range out {
			out[i] = a[i] - b[i]
		}
	case tMul:
		for i := range out {
			out[i] = a[i] * b[i]
		}
	case tDiv:
		for i := range out {
			if b[i] == 0 {
				bad = append(bad, i)
				continue
			}
			out[i] = a[i] / b[i]
		}
	case tMod:
		for i := range out {
			if b[i] == 0 {
				bad = append(bad, i)
				continue
			}
			out[i] = a[i] % b[i]
		}
	case tBAnd:
		for i := range out {
			out[i] = a[i] & b[i]
		}
	case tBOr:
		for i := range out {
			out[i] = a[i] | b[i]
		}
	case tBXor:
		for i := range out {
			out[i] = a[i] ^ b[i]
		}
	case tShl, tShr:
		for i := range out {
			v, ok := shiftInt(op, a[i], b[i])
			if !ok {
				bad = append(bad, i)
			}
			out[i] = v
		}
	}
	return out, bad
}

// intArithConst applies op with a constant right operand; it reports false
// for operators it does not specialise. Compile rejects a constant zero
// divisor and a negative constant shift, so no row can be undefined.
func intArithConst(op tokKind, a []int64, k int64) ([]int64, bool) {
	out := make([]int64, len(a))
	switch op {
	case tAdd:
		for i, x := range a {
			out[i] = x + k
		}
	case tSub:
		for i, x := range a {
			out[i] = x - k
		}
	case tMul:
		for i, x := range a {
			out[i] = x * k
		}
	case tDiv:
		if k == 0 {
			return nil, false
		}
		for i, x := range a {
			out[i] = x / k
		}
	case tMod:
		if k == 0 {
			return nil, false
		}
		for i, x := range a {
			out[i] = x % k
		}
	case tBAnd:
		for i, x := range a {
			out[i] = x & k
		}
	case tBOr:
		for i, x := range a {
			out[i] = x | k
		}
	case tBXor:
		for i, x := range a {
			out[i] = x ^ k
		}
	default:
		return nil, false
	}
	return out, true
}

func shiftInt(op tokKind, a, s int64) (int64, bool) {
	if s < 0 {
		return 0, false
	}
	if s > 63 {
		s = 63 + 1
	}
	if op == tShl {
		return a << uint64(s), true
	}
	return a >> uint64(s), true
}

func floatArith(op tokKind, a, b []float64) ([]float64, []int) {
	out := make([]float64, len(a))
	var bad []int
	switch op {
	case tAdd:
		for i := range out {
			out[i] = a[i] + b[i]
		}
	case tSub:
		for i := range out {
			out[i] = a[i] - b[i]
		}
	case tMul:
		for i := range out {
			out[i] = a[i] * b[i]
		}
	case tDiv:
		for i := range out {
			if b[i] == 0 {
				bad = append(bad, i)
				continue
			}
			out[i] = a[i] / b[i]
		}
	case tMod:
		for i := range out {
			if b[i] == 0 {
				bad = append(bad, i)
				continue
			}
			out[i] = math.Mod(a[i], b[i])
		}
	case tPow:
		for i := range out {
			out[i] = math.Pow(a[i], b[i])
		}
	}
	return out, bad
}

// negNode negates or bitwise-complements a vector.
type negNode struct {
	op tokKind // tSub or tBNot
	x  valNode
}

func (n *negNode) typ() vtype                { return n.x.typ() }
func (n *negNode) String() string            { return n.op.String() + n.x.String() }
func (n *negNode) addFields(add func(int64)) { n.x.addFields(add) }

func (n *negNode) eval(c *evalCtx) (vec, error) {
	v, err := n.x.eval(c)
	if err != nil {
		return vec{}, err
	}
	if v.t == tyFloat {
		out := make([]float64, len(v.floats))
		for i, x := range v.floats {
			out[i] = -x
		}
		return vec{t: tyFloat, floats: out, valid: v.valid}, nil
	}
	out := make([]int64, len(v.ints))
	if n.op == tBNot {
		for i, x := range v.ints {
			out[i] = ^x
		}
	} else {
		for i, x := range v.ints {
			out[i] = -x
		}
	}
	return vec{t: tyInt, ints: out, valid: v.valid}, nil
}

// jsonRef is a JSON field (or the dynamic field) plus a path into it.
type jsonRef struct {
	fid  int64
	name string // field name, "$meta" for the dynamic field
	path []pathStep
}

func (r *jsonRef) String() string {
	var b strings.Builder
	b.WriteString(r.name)
	writePath(&b, r.path)
	return b.String()
}

func writePath(b *strings.Builder, path []pathStep) {
	for _, s := range path {
		if s.isKey {
			b.WriteString("[" + strconv.Quote(s.key) + "]")
		} else {
			b.WriteString("[" + strconv.FormatInt(s.index, 10) + "]")
		}
	}
}

func (r *jsonRef) col(c *evalCtx) (*column.JSONs, error) {
	col, err := c.column(r.fid, r.name)
	if err != nil {
		return nil, err
	}
	j, ok := col.(*column.JSONs)
	if !ok {
		return nil, wrongColumn(r.name, col, "*column.JSONs")
	}
	return j, nil
}

// each calls fn with the raw value at the path for every row that is not
// null; rows where the path is missing get raw == nil. It returns the
// validity mask (nil when the column has no nulls).
func (r *jsonRef) each(c *evalCtx, fn func(i int, raw []byte)) ([]bool, error) {
	col, err := r.col(c)
	if err != nil {
		return nil, err
	}
	for i, doc := range col.Data {
		if col.IsNull(i) {
			continue
		}
		raw, ok := jsonLookup(doc, r.path)
		if !ok {
			raw = nil
		}
		fn(i, raw)
	}
	if col.Valid == nil {
		return nil, nil
	}
	return append([]bool(nil), col.Valid...), nil
}

// jsonNumNode reads a JSON path as a float vector; rows where the value is
// missing or not a number are invalid.
type jsonNumNode struct{ ref *jsonRef }

func (n *jsonNumNode) typ() vtype                { return tyFloat }
func (n *jsonNumNode) String() string            { return n.ref.String() }
func (n *jsonNumNode) addFields(add func(int64)) { add(n.ref.fid) }

func (n *jsonNumNode) eval(c *evalCtx) (vec, error) {
	out := make([]float64, c.n)
	valid := make([]bool, c.n)
	_, err := n.ref.each(c, func(i int, raw []byte) {
		if k := jsonKind(raw); raw != nil && (k == vkInt || k == vkFloat) {
			if v, ok := jsonNumber(raw); ok {
				out[i], valid[i] = v.asFloat(), true
			}
		}
	})
	if err != nil {
		return vec{}, err
	}
	return vec{t: tyFloat, floats: out, valid: valid}, nil
}

// arrayRef is an Array field.
type arrayRef struct {
	fid  int64
	name string
	elem schemapb.DataType
}

func (r *arrayRef) col(c *evalCtx) (*column.Arrays, error) {
	col, err := c.column(r.fid, r.name)
	if err != nil {
		return nil, err
	}
	a, ok := col.(*column.Arrays)
	if !ok {
		return nil, wrongColumn(r.name, col, "*column.Arrays")
	}
	return a, nil
}

// elemType maps an array element type onto a vector type.
func elemType(dt schemapb.DataType) (vtype, bool) {
	switch dt {
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64:
		return tyInt, true
	case schemapb.DataType_Float, schemapb.DataType_Double:
		return tyFloat, true
	case schemapb.DataType_VarChar, schemapb.DataType_String:
		return tyString, true
	case schemapb.DataType_Bool:
		return tyBool, true
	}
	return 0, false
}

// arrayLenNode is array_length(f) for an Array field or a JSON path.
type arrayLenNode struct {
	arr  *arrayRef
	json *jsonRef
}

func (n *arrayLenNode) typ() vtype { return tyInt }
func (n *arrayLenNode) String() string {
	if n.arr != nil {
		return "array_length(" + n.arr.name + ")"
	}
	return "array_length(" + n.json.String() + ")"
}

func (n *arrayLenNode) addFields(add func(int64)) {
	if n.arr != nil {
		add(n.arr.fid)
	} else {
		add(n.json.fid)
	}
}

func (n *arrayLenNode) eval(c *evalCtx) (vec, error) {
	out := make([]int64, c.n)
	if n.arr != nil {
		col, err := n.arr.col(c)
		if err != nil {
			return vec{}, err
		}
		for i, a := range col.Data {
			out[i] = int64(column.ScalarLen(a))
		}
		return vec{t: tyInt, ints: out, valid: col.Valid}, nil
	}
	valid := make([]bool, c.n)
	_, err := n.json.each(c, func(i int, raw []byte) {
		cnt := int64(0)
		valid[i] = jsonElems(raw, func([]byte) bool { cnt++; return true })
		out[i] = cnt
	})
	if err != nil {
		return vec{}, err
	}
	return vec{t: tyInt, ints: out, valid: valid}, nil
}

// arrayElemNode is f[k] on an Array field; rows shorter than k+1 are invalid.
type arrayElemNode struct {
	arr *arrayRef
	idx int64
	t   vtype
}

func (n *arrayElemNode) typ() vtype { return n.t }
func (n *arrayElemNode) String() string {
	return n.arr.name + "[" + strconv.FormatInt(n.idx, 10) + "]"
}
func (n *arrayElemNode) addFields(add func(int64)) { add(n.arr.fid) }

func (n *arrayElemNode) eval(c *evalCtx) (vec, error) {
	col, err := n.arr.col(c)
	if err != nil {
		return vec{}, err
	}
	v := vec{t: n.t, valid: make([]bool, c.n)}
	switch n.t {
	case tyInt:
		v.ints = make([]int64, c.n)
	case tyFloat:
		v.floats = make([]float64, c.n)
	case tyString:
		v.strs = make([]string, c.n)
	default:
		v.bools = make([]bool, c.n)
	}
	k := n.idx
	for i, a := range col.Data {
		if col.IsNull(i) || a == nil {
			continue
		}
		ok := true
		switch d := a.GetData().(type) {
		case *schemapb.ScalarField_LongData:
			if ok = n.t == tyInt && k < int64(len(d.LongData.Data)); ok {
				v.ints[i] = d.LongData.Data[k]
			}
		case *schemapb.ScalarField_IntData:
			if ok = n.t == tyInt && k < int64(len(d.IntData.Data)); ok {
				v.ints[i] = int64(d.IntData.Data[k])
			}
		case *schemapb.ScalarField_FloatData:
			if ok = n.t == tyFloat && k < int64(len(d.FloatData.Data)); ok {
				v.floats[i] = float64(d.FloatData.Data[k])
			}
		case *schemapb.ScalarField_DoubleData:
			if ok = n.t == tyFloat && k < int64(len(d.DoubleData.Data)); ok {
				v.floats[i] = d.DoubleData.Data[k]
			}
		case *schemapb.ScalarField_StringData:
			if ok = n.t == tyString && k < int64(len(d.StringData.Data)); ok {
				v.strs[i] = d.StringData.Data[k]
			}
		case *schemapb.ScalarField_BoolData:
			if ok = n.t == tyBool && k < int64(len(d.BoolData.Data)); ok {
				v.bools[i] = d.BoolData.Data[k]
			}
		default:
			ok = false
		}
		v.valid[i] = ok
	}
	return v, nil
}
