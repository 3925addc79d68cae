package expr

// MayMatchRange reports whether a row whose field fieldID lies in [lo, hi]
// could satisfy the expression. It returns false only when the expression
// certainly excludes every such row, so a caller may skip a segment whose
// key range is [lo, hi] (clustering-key pruning). lo and hi are int64,
// float64 or string, the field's values widened as in package column.
// Unknown shapes answer true.
func (e *Expr) MayMatchRange(fieldID int64, lo, hi any) bool {
	if e == nil || e.root == nil {
		return true
	}
	return mayMatch(e.root, fieldID, lo, hi)
}

func mayMatch(p pred, fid int64, lo, hi any) bool {
	switch q := p.(type) {
	case *andPred:
		for _, r := range q.ps {
			if !mayMatch(r, fid, lo, hi) {
				return false
			}
		}
		return true
	case *orPred:
		for _, r := range q.ps {
			if mayMatch(r, fid, lo, hi) {
				return true
			}
		}
		return len(q.ps) == 0
	case *cmpConstPred:
		cn, ok := q.x.(*colNode)
		if !ok || cn.fid != fid {
			return true
		}
		cl, ok1 := compareValue(q.k, lo)
		ch, ok2 := compareValue(q.k, hi)
		if !ok1 || !ok2 {
			return true
		}
		// cl = sign(k - lo), ch = sign(k - hi); some x in [lo, hi] satisfies "x op k"?
		switch q.op {
		case opEq:
			return cl >= 0 && ch <= 0
		case opLt: // x < k
			return cl > 0
		case opLe:
			return cl >= 0
		case opGt: // x > k
			return ch < 0
		case opGe:
			return ch <= 0
		}
		return true
	case *inPred:
		cn, ok := q.x.(*colNode)
		if !ok || cn.fid != fid {
			return true
		}
		for _, v := range q.vals {
			cl, ok1 := compareValue(v, lo)
			ch, ok2 := compareValue(v, hi)
			if !ok1 || !ok2 || (cl >= 0 && ch <= 0) {
				return true
			}
		}
		return false
	}
	return true
}

// compareValue compares a constant with a bound: -1, 0 or 1, and ok=false
// when they are not comparable.
func compareValue(v value, b any) (int, bool) {
	sign := func(d float64) int {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
		return 0
	}
	switch b := b.(type) {
	case int64:
		switch v.k {
		case vkInt:
			switch {
			case v.i < b:
				return -1, true
			case v.i > b:
				return 1, true
			}
			return 0, true
		case vkFloat:
			return sign(v.f - float64(b)), true
		}
	case float64:
		switch v.k {
		case vkInt:
			return sign(float64(v.i) - b), true
		case vkFloat:
			return sign(v.f - b), true
		}
	case string:
		if v.k == vkString {
			switch {
			case v.s < b:
				return -1, true
			case v.s > b:
				return 1, true
			}
			return 0, true
		}
	}
	return 0, false
}
