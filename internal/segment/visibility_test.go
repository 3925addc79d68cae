package segment_test

import (
	"fmt"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/segment"
)

// op is one write of a visibility scenario: an insert of key pk at ts, or
// (del) a delete of key pk at ts; an upsert is a delete and an insert of
// one key at one ts.
type op struct {
	del bool
	pk  int64
	ts  uint64
}

func ins(pk int64, ts uint64) op { return op{pk: pk, ts: ts} }
func del(pk int64, ts uint64) op { return op{del: true, pk: pk, ts: ts} }
func ups(pk int64, ts uint64) []op {
	return []op{del(pk, ts), ins(pk, ts)}
}

// wantVisible is the rule, computed from the writes alone: the i-th insert
// is visible at read ts with TTL cut-off expire iff it was inserted at or
// before ts, not before expire, and no delete of its key has a timestamp in
// (its insert ts, ts].
func wantVisible(ops []op, ts, expire uint64) []bool {
	var out []bool
	for _, o := range ops {
		if o.del {
			continue
		}
		ok := o.ts <= ts && (expire == 0 || o.ts >= expire)
		for _, d := range ops {
			if d.del && d.pk == o.pk && d.ts > o.ts && d.ts <= ts {
				ok = false
			}
		}
		out = append(out, ok)
	}
	return out
}

// build applies the writes to a growing segment (appended one by one, each
// delete when it comes) or to a sealed one (every insert loaded at once,
// then the deletes).
func build(t *testing.T, ops []op, sealed bool) *segment.Segment {
	t.Helper()
	s := newSeg(t)
	var pks []int64
	var tss []uint64
	for _, o := range ops {
		switch {
		case o.del && !sealed:
			s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{o.pk}}, []uint64{o.ts})
		case !o.del && !sealed:
			require.NoError(t, s.Append(rows([]int64{o.pk}, []int64{0}), []uint64{o.ts}))
		case !o.del:
			pks, tss = append(pks, o.pk), append(tss, o.ts)
		}
	}
	if sealed {
		require.NoError(t, s.Load(rows(pks, make([]int64, len(pks))), tss))
		for _, o := range ops {
			if o.del {
				s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{o.pk}}, []uint64{o.ts})
			}
		}
	}
	return s
}

func concat(parts ...[]op) []op {
	var out []op
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// VisibleAt follows the visibility rule at every read timestamp and TTL
// cut-off, for growing and sealed segments: before, between and after the
// inserts and deletes, with upserts and deletes that precede their key's
// insert; its count is the number of visible rows, and a nil mask means
// every row.
func TestVisibleAtFollowsTheRule(t *testing.T) {
	scenarios := map[string][]op{
		"inserts only":           {ins(1, 10), ins(2, 20), ins(3, 30)},
		"delete":                 {ins(1, 10), ins(2, 10), del(2, 20)},
		"delete before insert":   {del(1, 5), ins(1, 10), ins(2, 10)},
		"delete at insert ts":    {ins(1, 10), del(1, 10), ins(2, 10)},
		"upsert":                 concat([]op{ins(1, 10), ins(2, 10)}, ups(1, 20)),
		"upsert twice":           concat([]op{ins(1, 10)}, ups(1, 20), ups(1, 30), []op{ins(2, 25)}),
		"delete after upsert":    concat([]op{ins(1, 10), ins(2, 10)}, ups(2, 20), []op{del(2, 30)}),
		"deletes out of order":   {ins(1, 10), ins(2, 10), ins(3, 10), del(1, 40), del(2, 20), del(1, 30)},
		"everything deleted":     {ins(1, 10), ins(2, 10), del(1, 20), del(2, 20)},
		"duplicate keys":         {ins(1, 10), ins(1, 20), del(1, 15), ins(2, 20)},
		"delete of a later copy": {ins(1, 10), ins(1, 30), del(1, 20), del(1, 40)},
	}
	for name, ops := range scenarios {
		for _, sealed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sealed=%v", name, sealed), func(t *testing.T) {
				s := build(t, ops, sealed)
				for ts := uint64(0); ts <= 50; ts += 5 {
					for _, expire := range []uint64{0, 10, 15, 20, 31, 60} {
						want := wantVisible(ops, ts, expire)
						n := 0
						for _, ok := range want {
							if ok {
								n++
							}
						}
						require.NoError(t, s.Read(func(v *segment.View) error {
							mask, count := v.VisibleAt(ts, expire)
							require.Equal(t, n, count, "ts %d expire %d", ts, expire)
							if mask == nil {
								require.Equal(t, len(want), n, "nil mask with hidden rows at ts %d expire %d", ts, expire)
							} else if count > 0 {
								require.Equal(t, want, mask, "ts %d expire %d", ts, expire)
							}
							if expire == 0 {
								require.Equal(t, want, v.Visible(ts), "Visible at ts %d", ts)
							}
							return nil
						}))
					}
				}
			})
		}
	}
}

// The common reads do no work per row: without deletes the mask is nil,
// and with deletes it is the segment's maintained mask, the same slice
// read after read, until a delete older than the read revives rows.
func TestVisibleAtSharesTheMaintainedMask(t *testing.T) {
	s := build(t, []op{ins(1, 10), ins(2, 10), ins(3, 10)}, true)
	read := func(ts uint64) (mask []bool, count int, settled bool) {
		require.NoError(t, s.Read(func(v *segment.View) error {
			mask, count = v.VisibleAt(ts, 0)
			settled = v.Settled(ts, 0)
			return nil
		}))
		return
	}
	mask, count, settled := read(20)
	require.Nil(t, mask)
	require.Equal(t, 3, count)
	require.True(t, settled)
	s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{2}}, []uint64{30})
	a, count, settled := read(40)
	require.Equal(t, []bool{true, false, true}, a)
	require.Equal(t, 2, count)
	require.True(t, settled)
	b, _, _ := read(50)
	require.Same(t, &a[0], &b[0], "the maintained mask is shared, not rebuilt")
	c, count, settled := read(25) // before the delete: MVCC revives row 1
	require.Equal(t, []bool{true, true, true}, c)
	require.Equal(t, 3, count)
	require.False(t, settled)
	require.NotSame(t, &a[0], &c[0])
	require.Equal(t, []bool{true, false, true}, a, "the maintained mask is left alone")

	// TTL: nothing expires before the oldest row; after the newest, all do.
	require.NoError(t, s.Read(func(v *segment.View) error {
		require.True(t, v.Settled(40, 10))
		require.False(t, v.Settled(40, 11))
		_, count := v.VisibleAt(40, 11)
		require.Zero(t, count)
		return nil
	}))
}

// CachedMask keeps a sealed segment's mask until its rows or delete marks
// change, and caches nothing for a growing segment.
func TestCachedMask(t *testing.T) {
	builds := 0
	get := func(s *segment.Segment, key string) (mask []bool) {
		require.NoError(t, s.Read(func(v *segment.View) error {
			var err error
			mask, _, err = v.CachedMask(key, func() ([]bool, int, error) {
				builds++
				m, _ := v.VisibleAt(100, 0)
				return append([]bool(nil), m...), 0, nil
			})
			return err
		}))
		return mask
	}
	sealed := build(t, []op{ins(1, 10), ins(2, 10), del(1, 20)}, true)
	get(sealed, "a")
	get(sealed, "a")
	require.Equal(t, 1, builds, "a hit")
	get(sealed, "b")
	require.Equal(t, 2, builds, "another key")
	sealed.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{2}}, []uint64{30})
	require.Equal(t, []bool{false, false}, get(sealed, "a"), "a delete makes the cached mask stale")
	require.Equal(t, 3, builds)
	for i := range 20 { // more keys than the cache holds: it stays bounded and correct
		get(sealed, fmt.Sprint(i))
	}
	builds = 0
	get(sealed, "0")
	require.Equal(t, 1, builds, "the least recently used key was evicted")
	get(sealed, "19")
	require.Equal(t, 1, builds, "a recent key is kept")

	growing := build(t, []op{ins(1, 10), ins(2, 10)}, false)
	builds = 0
	get(growing, "a")
	get(growing, "a")
	require.Equal(t, 2, builds, "a growing segment caches nothing")
}
