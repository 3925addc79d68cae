package datanode

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/internal/column"
)

// sortByPK returns the rows of cols in primary-key order. The order is
// stable: rows with equal keys (a key inserted twice in one batch) keep
// their insert order, so whatever a reader decides by row order (the later
// row of a key wins) is unchanged. Columns already in order are returned
// as they are, without a copy.
func sortByPK(cols map[int64]column.Column, pk int64) (map[int64]column.Column, error) {
	order, err := pkOrder(cols[pk])
	if err != nil || order == nil {
		return cols, err
	}
	out := make(map[int64]column.Column, len(cols))
	for id, c := range cols {
		out[id] = c.Take(order)
	}
	return out, nil
}

// pkOrder returns the permutation that sorts a primary-key column (nil when
// it is sorted already).
func pkOrder(c column.Column) ([]int, error) {
	switch c := c.(type) {
	case *column.Ints:
		return order(c.Data), nil
	case *column.Strings:
		return order(c.Data), nil
	case nil:
		return nil, fmt.Errorf("datanode: no primary-key column to sort by")
	}
	return nil, fmt.Errorf("datanode: cannot sort by a %T primary key", c)
}

func order[T int64 | string](keys []T) []int {
	if slices.IsSorted(keys) {
		return nil
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	return idx
}
