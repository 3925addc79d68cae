package querynode

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

// maskKey keys a sealed segment's cached search mask: the filter text (with
// the time zone its ISO literals are read in), what it compiled to against
// the current schema (its canonical form and the field IDs it reads: after
// a field is added, the same text may read that field instead of a dynamic
// key) and the vector field whose null rows the mask leaves out.
type maskKey struct {
	filter, timezone string
	compiled, fields string
	field            int64
}

// searchMask returns the rows of view v a vector search of field may
// return at ts: visible, not expired (inserted before expire), matching e
// and with a non-null vector. A nil mask allows every row; count is the
// number allowed. The mask must not be modified: it may be the segment's
// maintained live-row mask or a cached one.
//
// No per-row work is done when nothing needs it: with no filter and no null
// vectors the mask is the segment's own (nil without deletes); with a filter
// the combined mask of a sealed segment is cached by filter text and the
// segment's version, so it is built once until rows or deletes change.
// Filters with template values are evaluated on every read.
func searchMask(v *segment.View, r *plan.Read, ts, expire uint64, e *expr.Expr, field int64) ([]bool, int, error) {
	vis, count := v.VisibleAt(ts, expire)
	if count == 0 {
		return vis, 0, nil
	}
	filtered := e != nil && !e.MatchesAll()
	valid := nullRows(v.Column(field))
	if !filtered && valid == nil {
		return vis, count, nil
	}
	build := func() ([]bool, int, error) {
		var m []bool
		if filtered {
			var err error
			if m, err = e.Eval(v); err != nil {
				return nil, 0, err
			}
		}
		out := make([]bool, v.Len())
		n := 0
		for i := range out {
			ok := (vis == nil || vis[i]) && (m == nil || m[i]) && (valid == nil || i >= len(valid) || valid[i])
			out[i] = ok
			if ok {
				n++
			}
		}
		return out, n, nil
	}
	if !v.Settled(ts, expire) || len(r.Templates) > 0 {
		return build()
	}
	key := maskKey{filter: r.Filter, timezone: r.Timezone, field: field}
	if filtered {
		key.compiled, key.fields = e.String(), fmt.Sprint(e.Fields())
	}
	return v.CachedMask(key, build)
}

// nullRows returns the validity of a nullable column (nil for a column
// that cannot hold nulls): the rows whose vector is null are never hits.
func nullRows(c column.Column) []bool {
	if c == nil {
		return nil
	}
	return c.Validity()
}

// ownMask returns a mask of n rows the caller may modify: a copy of mask,
// or every row allowed when mask is nil.
func ownMask(mask []bool, n int) []bool {
	if mask == nil {
		return slices.Repeat([]bool{true}, n)
	}
	return slices.Clone(mask[:n])
}
