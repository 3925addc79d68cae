package expr

import (
	"bytes"
	"math"
	"strings"
)

// boolVec is a three-valued boolean vector: valid nil means no row is null;
// val[i] is always false where valid[i] is false.
type boolVec struct {
	val   []bool
	valid []bool
}

// pred is a compiled boolean operator over a whole batch.
type pred interface {
	eval(c *evalCtx) (boolVec, error)
	addFields(add func(int64))
	String() string
}

// mask clears val wherever valid is false.
func mask(val, valid []bool) boolVec {
	if valid != nil {
		for i, ok := range valid {
			val[i] = val[i] && ok
		}
	}
	return boolVec{val: val, valid: valid}
}

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
)

func (o cmpOp) String() string { return [...]string{"==", "!=", "<", "<=", ">", ">="}[o] }

// flip returns the operator with its operands swapped (a < b == b > a).
func (o cmpOp) flip() cmpOp {
	switch o {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return o
}

func cmpFromTok(k tokKind) cmpOp {
	switch k {
	case tNe:
		return opNe
	case tLt:
		return opLt
	case tLe:
		return opLe
	case tGt:
		return opGt
	case tGe:
		return opGe
	}
	return opEq
}

// holds reports whether c (a three-way comparison result, or 2 for
// "unordered", i.e. NaN) satisfies o.
func (o cmpOp) holds(c int) bool {
	if c == 2 {
		return o == opNe
	}
	switch o {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

type ordered interface{ ~int64 | ~float64 | ~string }

// cmpSliceConst is the hot loop for "column op constant".
func cmpSliceConst[T ordered](xs []T, k T, op cmpOp, out []bool) {
	out = out[:len(xs)]
	switch op {
	case opEq:
		for i, x := range xs {
			out[i] = x == k
		}
	case opNe:
		for i, x := range xs {
			out[i] = x != k
		}
	case opLt:
		for i, x := range xs {
			out[i] = x < k
		}
	case opLe:
		for i, x := range xs {
			out[i] = x <= k
		}
	case opGt:
		for i, x := range xs {
			out[i] = x > k
		}
	case opGe:
		for i, x := range xs {
			out[i] = x >= k
		}
	}
}

// cmpSlices is the loop for "column op column".
func cmpSlices[T ordered](a, b []T, op cmpOp, out []bool) {
	b = b[:len(a)]
	out = out[:len(a)]
	switch op {
	case opEq:
		for i := range a {
			out[i] = a[i] == b[i]
		}
	case opNe:
		for i := range a {
			out[i] = a[i] != b[i]
		}
	case opLt:
		for i := range a {
			out[i] = a[i] < b[i]
		}
	case opLe:
		for i := range a {
			out[i] = a[i] <= b[i]
		}
	case opGt:
		for i := range a {
			out[i] = a[i] > b[i]
		}
	case opGe:
		for i := range a {
			out[i] = a[i] >= b[i]
		}
	}
}

func fill(out []bool, v bool) {
	for i := range out {
		out[i] = v
	}
}

// constPred is a constant true or false.
type constPred struct{ v bool }

func (p *constPred) addFields(func(int64)) {}
func (p *constPred) String() string {
	if p.v {
		return "true"
	}
	return "false"
}

func (p *constPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	fill(out, p.v)
	return boolVec{val: out}, nil
}

// truthPred uses a boolean vector (a Bool field) as a predicate.
type truthPred struct{ x valNode }

func (p *truthPred) addFields(add func(int64)) { p.x.addFields(add) }
func (p *truthPred) String() string            { return p.x.String() }
func (p *truthPred) eval(c *evalCtx) (boolVec, error) {
	v, err := p.x.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	out := append([]bool(nil), v.bools...)
	return mask(out, v.valid), nil
}

// cmpConstPred compares a vector with a constant.
type cmpConstPred struct {
	x  valNode
	op cmpOp
	k  value // vkInt, vkFloat, vkString or vkBool matching x's type
}

func (p *cmpConstPred) addFields(add func(int64)) { p.x.addFields(add) }
func (p *cmpConstPred) String() string {
	return p.x.String() + " " + p.op.String() + " " + p.k.String()
}

func (p *cmpConstPred) eval(c *evalCtx) (boolVec, error) {
	if bv, ok := p.evalIndex(c); ok {
		return bv, nil
	}
	v, err := p.x.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	switch v.t {
	case tyInt:
		if p.k.k == vkInt {
			cmpSliceConst(v.ints, p.k.i, p.op, out)
		} else {
			cmpIntFloat(v.ints, p.k.f, p.op, out)
		}
	case tyFloat:
		cmpSliceConst(v.floats, p.k.asFloat(), p.op, out)
	case tyString:
		cmpSliceConst(v.strs, p.k.s, p.op, out)
	case tyBool:
		want := p.k.b
		if p.op == opNe {
			want = !want
		}
		for i, b := range v.bools {
			out[i] = b == want
		}
	}
	return mask(out, v.valid), nil
}

// cmpIntFloat compares integers with a float constant exactly, by turning
// the constant into an integer bound.
func cmpIntFloat(xs []int64, f float64, op cmpOp, out []bool) {
	switch {
	case math.IsNaN(f):
		fill(out[:len(xs)], op == opNe)
		return
	case f >= 9.223372036854775807e18:
		fill(out[:len(xs)], op == opNe || op == opLt || op == opLe)
		return
	case f < -9.223372036854775808e18:
		fill(out[:len(xs)], op == opNe || op == opGt || op == opGe)
		return
	}
	if n, ok := floatToInt(f); ok {
		cmpSliceConst(xs, n, op, out)
		return
	}
	fl := int64(math.Floor(f))
	switch op {
	case opEq, opNe:
		fill(out[:len(xs)], op == opNe)
	case opLt, opLe:
		cmpSliceConst(xs, fl, opLe, out)
	case opGt, opGe:
		cmpSliceConst(xs, fl, opGt, out)
	}
}

// cmpPred compares two vectors row by row.
type cmpPred struct {
	l, r valNode
	op   cmpOp
}

func (p *cmpPred) addFields(add func(int64)) { p.l.addFields(add); p.r.addFields(add) }
func (p *cmpPred) String() string {
	return p.l.String() + " " + p.op.String() + " " + p.r.String()
}

func (p *cmpPred) eval(c *evalCtx) (boolVec, error) {
	a, err := p.l.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	b, err := p.r.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	switch {
	case a.t == tyInt && b.t == tyInt:
		cmpSlices(a.ints, b.ints, p.op, out)
	case a.t.numeric():
		cmpSlices(a.floatsOf(), b.floatsOf(), p.op, out)
	case a.t == tyString:
		cmpSlices(a.strs, b.strs, p.op, out)
	default:
		for i := range out {
			out[i] = (a.bools[i] == b.bools[i]) == (p.op == opEq)
		}
	}
	return mask(out, andMask(a.valid, b.valid)), nil
}

// andPred is a conjunction with SQL three-valued logic.
type andPred struct{ ps []pred }

// orPred is a disjunction with SQL three-valued logic.
type orPred struct{ ps []pred }

// notPred negates its operand; null stays null.
type notPred struct{ p pred }

func (p *andPred) addFields(add func(int64)) {
	for _, q := range p.ps {
		q.addFields(add)
	}
}

func (p *orPred) addFields(add func(int64)) {
	for _, q := range p.ps {
		q.addFields(add)
	}
}
func (p *notPred) addFields(add func(int64)) { p.p.addFields(add) }

func joinPreds(ps []pred, sep string) string {
	parts := make([]string, len(ps))
	for i, q := range ps {
		parts[i] = q.String()
	}
	return "(" + strings.Join(parts, " "+sep+" ") + ")"
}

func (p *andPred) String() string { return joinPreds(p.ps, "and") }
func (p *orPred) String() string  { return joinPreds(p.ps, "or") }
func (p *notPred) String() string {
	s := p.p.String()
	if !strings.HasPrefix(s, "(") {
		s = "(" + s + ")"
	}
	return "not " + s
}

func (p *andPred) eval(c *evalCtx) (boolVec, error) {
	if bv, ok := p.evalIndexRange(c); ok {
		return bv, nil
	}
	acc, err := p.ps[0].eval(c)
	if err != nil {
		return boolVec{}, err
	}
	for _, q := range p.ps[1:] {
		b, err := q.eval(c)
		if err != nil {
			return boolVec{}, err
		}
		if acc.valid == nil && b.valid == nil {
			for i, x := range b.val {
				acc.val[i] = acc.val[i] && x
			}
			continue
		}
		// A row is known when both sides are known or either is a known false.
		av, bv := ownMask(acc.valid, c.n), ownMask(b.valid, c.n)
		for i := range acc.val {
			known := av[i] && bv[i] || av[i] && !acc.val[i] || bv[i] && !b.val[i]
			acc.val[i] = acc.val[i] && b.val[i]
			av[i] = known
		}
		acc.valid = av
	}
	return acc, nil
}

func (p *orPred) eval(c *evalCtx) (boolVec, error) {
	acc, err := p.ps[0].eval(c)
	if err != nil {
		return boolVec{}, err
	}
	for _, q := range p.ps[1:] {
		b, err := q.eval(c)
		if err != nil {
			return boolVec{}, err
		}
		if acc.valid == nil && b.valid == nil {
			for i, x := range b.val {
				acc.val[i] = acc.val[i] || x
			}
			continue
		}
		// A row is known when both sides are known or either is true.
		av, bv := ownMask(acc.valid, c.n), ownMask(b.valid, c.n)
		for i := range acc.val {
			known := av[i] && bv[i] || acc.val[i] || b.val[i]
			acc.val[i] = acc.val[i] || b.val[i]
			av[i] = known
		}
		acc.valid = av
	}
	return acc, nil
}

func (p *notPred) eval(c *evalCtx) (boolVec, error) {
	v, err := p.p.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	for i, x := range v.val {
		v.val[i] = !x
	}
	return mask(v.val, v.valid), nil
}

// intSet is a membership test for integers, built once at compile time: a
// bitmap when the values span a small range, otherwise an open-addressing
// hash table with linear probing kept at most 25% full.
type intSet struct {
	lo    int64
	bits  []uint64
	keys  []int64
	used  []bool
	shift uint
}

func newIntSet(vals []int64) *intSet {
	s := &intSet{}
	if len(vals) == 0 {
		s.bits = []uint64{0}
		return s
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if span := uint64(hi) - uint64(lo); span < 1<<16 {
		s.lo = lo
		s.bits = make([]uint64, span/64+1)
		for _, v := range vals {
			d := uint64(v - lo)
			s.bits[d/64] |= 1 << (d % 64)
		}
		return s
	}
	size, bitsN := 4, uint(2)
	for size < 4*len(vals) {
		size *= 2
		bitsN++
	}
	s.shift = 64 - bitsN
	s.keys = make([]int64, size)
	s.used = make([]bool, size)
	for _, v := range vals {
		h := s.slot(v)
		for s.used[h] && s.keys[h] != v {
			h = (h + 1) & (len(s.keys) - 1)
		}
		s.keys[h], s.used[h] = v, true
	}
	return s
}

func (s *intSet) slot(v int64) int { return int((uint64(v) * 0x9E3779B97F4A7C15) >> s.shift) }

func (s *intSet) has(v int64) bool {
	if s.bits != nil {
		d := uint64(v) - uint64(s.lo)
		return d/64 < uint64(len(s.bits)) && s.bits[d/64]&(1<<(d%64)) != 0
	}
	mask := len(s.keys) - 1
	for h := s.slot(v); s.used[h]; h = (h + 1) & mask {
		if s.keys[h] == v {
			return true
		}
	}
	return false
}

// inPred is x in [constants] on a typed vector.
type inPred struct {
	x     valNode
	vals  []value // the list as written, converted to x's type (for PKValues and String)
	ints  *intSet
	flts  map[float64]struct{}
	strs  map[string]struct{}
	bools [2]bool
}

func (p *inPred) addFields(add func(int64)) { p.x.addFields(add) }
func (p *inPred) String() string            { return p.x.String() + " in " + listVal(p.vals).String() }

func (p *inPred) eval(c *evalCtx) (boolVec, error) {
	if bv, ok := p.evalIndex(c); ok {
		return bv, nil
	}
	v, err := p.x.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	switch v.t {
	case tyInt:
		s := p.ints
		if s.bits != nil {
			lo, nb := uint64(s.lo), uint64(len(s.bits))
			for i, x := range v.ints {
				d := uint64(x) - lo
				out[i] = d/64 < nb && s.bits[d/64]&(1<<(d%64)) != 0
			}
		} else {
			for i, x := range v.ints {
				out[i] = s.has(x)
			}
		}
	case tyFloat:
		for i, x := range v.floats {
			_, out[i] = p.flts[x]
		}
	case tyString:
		for i, x := range v.strs {
			_, out[i] = p.strs[x]
		}
	case tyBool:
		for i, x := range v.bools {
			if x {
				out[i] = p.bools[1]
			} else {
				out[i] = p.bools[0]
			}
		}
	}
	return mask(out, v.valid), nil
}

// likePred is x like pattern on a string vector.
type likePred struct {
	x valNode
	m *matcher
}

func (p *likePred) addFields(add func(int64)) { p.x.addFields(add) }
func (p *likePred) String() string            { return p.x.String() + " like " + strVal(p.m.pattern).String() }

func (p *likePred) eval(c *evalCtx) (boolVec, error) {
	if bv, ok := p.evalIndex(c); ok {
		return bv, nil
	}
	v, err := p.x.eval(c)
	if err != nil {
		return boolVec{}, err
	}
	out := make([]bool, c.n)
	p.m.matchAll(v.strs, out)
	return mask(out, v.valid), nil
}

// nullPred is "x is null" / "x is not null" for a field; its result is never null.
type nullPred struct {
	x    valNode // a scalar field, or nil
	arr  *arrayRef
	json *jsonRef
	not  bool
}

func (p *nullPred) addFields(add func(int64)) {
	switch {
	case p.x != nil:
		p.x.addFields(add)
	case p.arr != nil:
		add(p.arr.fid)
	default:
		add(p.json.fid)
	}
}

func (p *nullPred) String() string {
	var s string
	switch {
	case p.x != nil:
		s = p.x.String()
	case p.arr != nil:
		s = p.arr.name
	default:
		s = p.json.String()
	}
	if p.not {
		return s + " is not null"
	}
	return s + " is null"
}

func (p *nullPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	var valid []bool
	switch {
	case p.x != nil:
		v, err := p.x.eval(c)
		if err != nil {
			return boolVec{}, err
		}
		valid = v.valid
	case p.arr != nil:
		col, err := p.arr.col(c)
		if err != nil {
			return boolVec{}, err
		}
		valid = col.Valid
	case len(p.json.path) == 0:
		col, err := p.json.col(c)
		if err != nil {
			return boolVec{}, err
		}
		valid = col.Valid
	default:
		// A path is null when the row is null, the key is missing or the value is JSON null.
		present := make([]bool, c.n)
		if _, err := p.json.each(c, func(i int, raw []byte) {
			present[i] = raw != nil && jsonKind(raw) != vkNull
		}); err != nil {
			return boolVec{}, err
		}
		valid = present
	}
	for i := range out {
		isNull := valid != nil && !valid[i]
		out[i] = isNull != p.not
	}
	return boolVec{val: out}, nil
}

// jsonCmpPred compares the value at a JSON path with a constant by JSON
// type. A missing key or a type mismatch makes ==, <, <=, >, >= false and
// != true (!= is the negation of ==).
type jsonCmpPred struct {
	ref *jsonRef
	op  cmpOp
	k   value
	kb  []byte // k.s as bytes
}

func (p *jsonCmpPred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *jsonCmpPred) String() string {
	return p.ref.String() + " " + p.op.String() + " " + p.k.String()
}

func (p *jsonCmpPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	mismatch := p.op == opNe
	var fn func(i int, raw []byte)
	switch p.k.k {
	case vkInt:
		k := p.k.i
		fn = func(i int, raw []byte) {
			switch jsonKind(raw) {
			case vkInt:
				if n, ok := jsonInt(raw); ok {
					out[i] = p.op.holds(cmp3(n, k))
					return
				}
				fallthrough
			case vkFloat:
				if v, ok := jsonNumber(raw); ok {
					out[i] = p.op.holds(cmpFloat3(v.asFloat(), float64(k)))
					return
				}
			}
			out[i] = mismatch
		}
	case vkFloat:
		k := p.k.f
		fn = func(i int, raw []byte) {
			if kd := jsonKind(raw); raw != nil && (kd == vkInt || kd == vkFloat) {
				if v, ok := jsonNumber(raw); ok {
					out[i] = p.op.holds(cmpFloat3(v.asFloat(), k))
					return
				}
			}
			out[i] = mismatch
		}
	case vkString:
		fn = func(i int, raw []byte) {
			if jsonKind(raw) == vkString {
				if s, ok := jsonStringBytes(raw); ok {
					out[i] = p.op.holds(bytes.Compare(s, p.kb))
					return
				}
			}
			out[i] = mismatch
		}
	default: // bool
		fn = func(i int, raw []byte) {
			switch string(raw) {
			case "true":
				out[i] = p.k.b == (p.op == opEq)
			case "false":
				out[i] = !p.k.b == (p.op == opEq)
			default:
				out[i] = mismatch
			}
		}
	}
	valid, err := p.ref.each(c, func(i int, raw []byte) {
		if raw == nil {
			out[i] = mismatch
			return
		}
		fn(i, raw)
	})
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}

func cmp3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat3 compares floats; NaN compares unequal to everything (2 satisfies only !=).
func cmpFloat3(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return 2
}

// jsonInPred is path in [constants]: true when the JSON value equals any element.
type jsonInPred struct {
	ref  *jsonRef
	vals []value
	ints map[int64]struct{}
	flts map[float64]struct{}
	strs map[string]struct{}
	bls  [2]bool
	rest []value // lists and other values compared structurally
}

func newJSONInPred(ref *jsonRef, vals []value) *jsonInPred {
	p := &jsonInPred{ref: ref, vals: vals, ints: map[int64]struct{}{}, flts: map[float64]struct{}{}, strs: map[string]struct{}{}}
	for _, v := range vals {
		switch v.k {
		case vkInt:
			p.ints[v.i] = struct{}{}
			p.flts[float64(v.i)] = struct{}{}
		case vkFloat:
			p.flts[v.f] = struct{}{}
			if n, ok := floatToInt(v.f); ok {
				p.ints[n] = struct{}{}
			}
		case vkString:
			p.strs[v.s] = struct{}{}
		case vkBool:
			if v.b {
				p.bls[1] = true
			} else {
				p.bls[0] = true
			}
		default:
			p.rest = append(p.rest, v)
		}
	}
	return p
}

func (p *jsonInPred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *jsonInPred) String() string            { return p.ref.String() + " in " + listVal(p.vals).String() }

func (p *jsonInPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	valid, err := p.ref.each(c, func(i int, raw []byte) {
		if raw != nil {
			out[i] = p.match(raw)
		}
	})
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}

func (p *jsonInPred) match(raw []byte) bool {
	switch jsonKind(raw) {
	case vkInt:
		if n, ok := jsonInt(raw); ok {
			_, hit := p.ints[n]
			return hit
		}
		fallthrough
	case vkFloat:
		v, ok := jsonNumber(raw)
		if !ok {
			return false
		}
		_, hit := p.flts[v.asFloat()]
		return hit
	case vkString:
		s, ok := jsonStringBytes(raw)
		if !ok {
			return false
		}
		_, hit := p.strs[string(s)]
		return hit
	case vkBool:
		return raw[0] == 't' && p.bls[1] || raw[0] == 'f' && p.bls[0]
	case vkList:
		if len(p.rest) == 0 {
			return false
		}
		v, ok := decodeValue(raw, 0)
		if !ok {
			return false
		}
		for _, w := range p.rest {
			if equalValues(v, w) {
				return true
			}
		}
	}
	return false
}

// jsonLikePred is path like pattern: false unless the value is a string.
type jsonLikePred struct {
	ref *jsonRef
	m   *matcher
}

func (p *jsonLikePred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *jsonLikePred) String() string {
	return p.ref.String() + " like " + strVal(p.m.pattern).String()
}

func (p *jsonLikePred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	valid, err := p.ref.each(c, func(i int, raw []byte) {
		if jsonKind(raw) == vkString && raw != nil {
			if s, ok := jsonStringBytes(raw); ok {
				out[i] = p.m.match(string(s))
			}
		}
	})
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}

// existsPred is exists path: true when the key path is present (even if null).
type existsPred struct{ ref *jsonRef }

func (p *existsPred) addFields(add func(int64)) { add(p.ref.fid) }
func (p *existsPred) String() string            { return "exists " + p.ref.String() }
func (p *existsPred) eval(c *evalCtx) (boolVec, error) {
	out := make([]bool, c.n)
	valid, err := p.ref.each(c, func(i int, raw []byte) { out[i] = raw != nil })
	if err != nil {
		return boolVec{}, err
	}
	return mask(out, valid), nil
}
