package expr

import (
	"cmp"
	"math"
)

// FieldIndex is a scalar index over one field of a batch, used instead of
// scanning the column when a predicate compares that field with constants.
// Each Mark method sets out[r] = true for every row r whose non-null value
// lies in the given range (it never clears entries), returns the number of
// rows marked, and returns ok = false when it cannot answer (wrong key type,
// out not one entry per row), in which case the evaluator scans instead.
// Bool fields are keyed as the integers 0 and 1.
type FieldIndex interface {
	// MarkInts marks rows with lo <= v <= hi.
	MarkInts(lo, hi int64, out []bool) (n int, ok bool)
	// MarkFloats marks rows with v between lo and hi, each bound inclusive
	// or not; NaN values are never marked.
	MarkFloats(lo, hi float64, loIncl, hiIncl bool, out []bool) (n int, ok bool)
	// MarkStrings marks rows with v between lo and hi in byte order; hiInf
	// leaves the upper bound open-ended.
	MarkStrings(lo, hi string, loIncl, hiIncl, hiInf bool, out []bool) (n int, ok bool)
	// MarkPrefix marks rows whose string starts with prefix.
	MarkPrefix(prefix string, out []bool) (n int, ok bool)
	// Array reports whether the index is over an Array field's elements.
	Array() bool
}

// IndexedBatch is a Batch that may carry indexes over some of its fields
// (a sealed segment with scalar indexes attached). Index returns whatever
// is attached to the field, or nil; only values implementing FieldIndex
// are used.
type IndexedBatch interface {
	Batch
	Index(fieldID int64) any
}

// fieldIndex returns the scalar index of a plain field operand, or nil.
func (c *evalCtx) fieldIndex(x valNode) FieldIndex {
	cn, ok := x.(*colNode)
	if !ok {
		return nil
	}
	ib, ok := c.b.(IndexedBatch)
	if !ok {
		return nil
	}
	fi, ok := ib.Index(cn.fid).(FieldIndex)
	if !ok || fi.Array() {
		return nil
	}
	return fi
}

// indexTarget returns the scalar index of x, x's vector (for its validity
// mask; no values are read) and a zeroed output mask; ok is false when x
// has no usable index.
func (c *evalCtx) indexTarget(x valNode) (FieldIndex, vec, []bool, bool) {
	fi := c.fieldIndex(x)
	if fi == nil {
		return nil, vec{}, nil, false
	}
	v, err := x.eval(c)
	if err != nil {
		return nil, vec{}, nil, false
	}
	return fi, v, make([]bool, c.n), true
}

// markEq marks the rows equal to constant k (converted to the field's type
// by the checker); ok is false when the index cannot answer.
func markEq(fi FieldIndex, t vtype, k value, out []bool) bool {
	var ok bool
	switch t {
	case tyInt:
		n, exact := k.i, k.k == vkInt
		if k.k == vkFloat {
			if math.IsNaN(k.f) {
				return false
			}
			n, exact = floatToInt(k.f)
		}
		if !exact {
			return true // no integer equals a fractional or out-of-range constant
		}
		_, ok = fi.MarkInts(n, n, out)
	case tyFloat:
		f := k.asFloat()
		if math.IsNaN(f) {
			return false
		}
		_, ok = fi.MarkFloats(f, f, true, true, out)
	case tyString:
		_, ok = fi.MarkStrings(k.s, k.s, true, true, false, out)
	case tyBool:
		v := int64(0)
		if k.b {
			v = 1
		}
		_, ok = fi.MarkInts(v, v, out)
	}
	return ok
}

// interval is a range of index keys of one value type; bounds of the
// other types are ignored.
type interval struct {
	t            vtype
	empty        bool
	ilo, ihi     int64 // tyInt and tyBool, inclusive
	flo, fhi     float64
	floIn, fhiIn bool
	slo, shi     string
	sloIn, shiIn bool
	shiInf       bool // no upper bound for strings
}

// fullInterval holds every key of type t.
func fullInterval(t vtype) interval {
	return interval{
		t: t, ilo: math.MinInt64, ihi: math.MaxInt64, flo: math.Inf(-1), fhi: math.Inf(1),
		floIn: true, fhiIn: true, sloIn: true, shiInf: true,
	}
}

// cmpInterval returns the keys v with "v op k" for an ordering operator,
// with k converted to the field's type by the checker; ok is false for a
// NaN constant (the caller scans).
func cmpInterval(t vtype, op cmpOp, k value) (interval, bool) {
	iv := fullInterval(t)
	less := op == opLt || op == opLe
	switch t {
	case tyInt:
		if k.k == vkFloat {
			f := k.f
			switch {
			case math.IsNaN(f):
				return iv, false
			case f >= 9.223372036854775807e18: // above every int64
				iv.empty = !less
				return iv, true
			case f < -9.223372036854775808e18: // below every int64
				iv.empty = less
				return iv, true
			}
			n, exact := floatToInt(f)
			if !exact {
				// v < f and v <= f mean v <= floor(f); v > f and v >= f mean v >= floor(f)+1.
				// A fractional float64 is below 2^52 in magnitude, so neither overflows.
				fl := int64(math.Floor(f))
				if less {
					iv.ihi = fl
				} else {
					iv.ilo = fl + 1
				}
				return iv, true
			}
			k = intVal(n)
		}
		n := k.i
		switch op {
		case opLt:
			iv.empty = n == math.MinInt64
			iv.ihi = n - 1
		case opLe:
			iv.ihi = n
		case opGt:
			iv.empty = n == math.MaxInt64
			iv.ilo = n + 1
		case opGe:
			iv.ilo = n
		}
	case tyFloat:
		f := k.asFloat()
		if math.IsNaN(f) {
			return iv, false
		}
		if less {
			iv.fhi, iv.fhiIn = f, op == opLe
		} else {
			iv.flo, iv.floIn = f, op == opGe
		}
	case tyString:
		if less {
			iv.shi, iv.shiIn, iv.shiInf = k.s, op == opLe, false
		} else {
			iv.slo, iv.sloIn = k.s, op == opGe
		}
	default:
		return iv, false
	}
	return iv, true
}

// tighter returns the tighter of two bounds v and w with their
// inclusivity: the larger for a lower bound, the smaller for an upper one.
func tighter[T cmp.Ordered](v T, vIn bool, w T, wIn bool, lower bool) (T, bool) {
	switch {
	case v == w:
		return v, vIn && wIn
	case (w > v) == lower:
		return w, wIn
	}
	return v, vIn
}

// intersect returns the keys in both a and b (of the same type).
func (a interval) intersect(b interval) interval {
	a.empty = a.empty || b.empty
	a.ilo, a.ihi = max(a.ilo, b.ilo), min(a.ihi, b.ihi)
	a.flo, a.floIn = tighter(a.flo, a.floIn, b.flo, b.floIn, true)
	a.fhi, a.fhiIn = tighter(a.fhi, a.fhiIn, b.fhi, b.fhiIn, false)
	a.slo, a.sloIn = tighter(a.slo, a.sloIn, b.slo, b.sloIn, true)
	switch {
	case b.shiInf:
	case a.shiInf:
		a.shi, a.shiIn, a.shiInf = b.shi, b.shiIn, false
	default:
		a.shi, a.shiIn = tighter(a.shi, a.shiIn, b.shi, b.shiIn, false)
	}
	return a
}

// mark marks the rows whose key lies in the interval.
func (a interval) mark(fi FieldIndex, out []bool) bool {
	if a.empty {
		return true
	}
	var ok bool
	switch a.t {
	case tyInt:
		_, ok = fi.MarkInts(a.ilo, a.ihi, out)
	case tyFloat:
		_, ok = fi.MarkFloats(a.flo, a.fhi, a.floIn, a.fhiIn, out)
	case tyString:
		_, ok = fi.MarkStrings(a.slo, a.shi, a.sloIn, a.shiIn, a.shiInf, out)
	}
	return ok
}

// markCmp marks the rows v with "v op k" for an ordering operator.
func markCmp(fi FieldIndex, t vtype, op cmpOp, k value, out []bool) bool {
	iv, ok := cmpInterval(t, op, k)
	return ok && iv.mark(fi, out)
}

// evalIndexRange answers a conjunction of ordering comparisons of one
// indexed field with constants ("lo < x <= hi", "x >= a and x < b") with a
// single index lookup of the intersected range.
func (p *andPred) evalIndexRange(c *evalCtx) (boolVec, bool) {
	var x *colNode
	var iv interval
	for i, q := range p.ps {
		cp, ok := q.(*cmpConstPred)
		if !ok || cp.op == opEq || cp.op == opNe {
			return boolVec{}, false
		}
		cn, ok := cp.x.(*colNode)
		if !ok || x != nil && cn.fid != x.fid {
			return boolVec{}, false
		}
		qv, ok := cmpInterval(cn.t, cp.op, cp.k)
		if !ok {
			return boolVec{}, false
		}
		if i == 0 {
			x, iv = cn, qv
		} else {
			iv = iv.intersect(qv)
		}
	}
	fi, v, out, ok := c.indexTarget(x)
	if !ok || !iv.mark(fi, out) {
		return boolVec{}, false
	}
	return boolVec{val: out, valid: v.valid}, true
}

// complementValid turns the rows marked equal into the rows not equal:
// every non-null row not marked.
func complementValid(out, valid []bool) {
	for i, x := range out {
		out[i] = !x && (valid == nil || valid[i])
	}
}

// evalIndex answers "x op k" from a scalar index; ok is false when it
// cannot, and the caller scans.
func (p *cmpConstPred) evalIndex(c *evalCtx) (boolVec, bool) {
	fi, v, out, ok := c.indexTarget(p.x)
	if !ok {
		return boolVec{}, false
	}
	t := p.x.typ()
	switch p.op {
	case opEq, opNe:
		if !markEq(fi, t, p.k, out) {
			return boolVec{}, false
		}
		if p.op == opNe {
			complementValid(out, v.valid)
		}
	default:
		if !markCmp(fi, t, p.op, p.k, out) {
			return boolVec{}, false
		}
	}
	return boolVec{val: out, valid: v.valid}, true
}

// evalIndex answers "x in [...]" from a scalar index.
func (p *inPred) evalIndex(c *evalCtx) (boolVec, bool) {
	fi, v, out, ok := c.indexTarget(p.x)
	if !ok {
		return boolVec{}, false
	}
	t := p.x.typ()
	switch t {
	case tyFloat:
		for f := range p.flts {
			if !math.IsNaN(f) && !markEq(fi, t, floatVal(f), out) {
				return boolVec{}, false
			}
		}
	case tyBool:
		for i, want := range p.bools {
			if want && !markEq(fi, t, boolVal(i == 1), out) {
				return boolVec{}, false
			}
		}
	default:
		for _, k := range p.vals {
			if !markEq(fi, t, k, out) {
				return boolVec{}, false
			}
		}
	}
	return boolVec{val: out, valid: v.valid}, true
}

// evalIndex answers exact and prefix LIKE patterns from a scalar index.
func (p *likePred) evalIndex(c *evalCtx) (boolVec, bool) {
	if p.m.kind != likeExact && p.m.kind != likePrefix {
		return boolVec{}, false
	}
	fi, v, out, ok := c.indexTarget(p.x)
	if !ok {
		return boolVec{}, false
	}
	if p.m.kind == likeExact {
		_, ok = fi.MarkStrings(p.m.lit, p.m.lit, true, true, false, out)
	} else {
		_, ok = fi.MarkPrefix(p.m.lit, out)
	}
	if !ok {
		return boolVec{}, false
	}
	return boolVec{val: out, valid: v.valid}, true
}

// arrayIndex returns the scalar index over an Array field's elements, or nil.
func (c *evalCtx) arrayIndex(fid int64) FieldIndex {
	ib, ok := c.b.(IndexedBatch)
	if !ok {
		return nil
	}
	fi, ok := ib.Index(fid).(FieldIndex)
	if !ok || !fi.Array() {
		return nil
	}
	return fi
}

// evalIndex answers array_contains, array_contains_any and
// array_contains_all from an index over the array's elements: the union
// (or, for all, the intersection) of the rows holding each wanted element.
func (p *arrayContainsPred) evalIndex(c *evalCtx) (boolVec, bool) {
	fi := c.arrayIndex(p.arr.fid)
	if fi == nil || p.impossible {
		return boolVec{}, false
	}
	var wants []func(out []bool) bool
	for _, v := range p.ints {
		wants = append(wants, func(out []bool) bool { _, ok := fi.MarkInts(v, v, out); return ok })
	}
	for _, b := range p.bools {
		k := int64(0)
		if b {
			k = 1
		}
		wants = append(wants, func(out []bool) bool { _, ok := fi.MarkInts(k, k, out); return ok })
	}
	for _, f := range p.flts {
		if math.IsNaN(f) {
			return boolVec{}, false
		}
		wants = append(wants, func(out []bool) bool { _, ok := fi.MarkFloats(f, f, true, true, out); return ok })
	}
	for _, s := range p.strs {
		wants = append(wants, func(out []bool) bool { _, ok := fi.MarkStrings(s, s, true, true, false, out); return ok })
	}
	if len(wants) == 0 {
		return boolVec{}, false // contains_all of [] holds for every non-null row: scan
	}
	col, err := p.arr.col(c)
	if err != nil {
		return boolVec{}, false
	}
	out := make([]bool, c.n)
	if p.mode != containsAll {
		for _, w := range wants {
			if !w(out) {
				return boolVec{}, false
			}
		}
		return boolVec{val: out, valid: col.Valid}, true
	}
	if !wants[0](out) {
		return boolVec{}, false
	}
	tmp := make([]bool, c.n)
	for _, w := range wants[1:] {
		clear(tmp)
		if !w(tmp) {
			return boolVec{}, false
		}
		for i, x := range tmp {
			out[i] = out[i] && x
		}
	}
	return boolVec{val: out, valid: col.Valid}, true
}
