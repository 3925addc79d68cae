package column

import "fmt"

// Nullable vector columns (Milvus 2.6) keep one slot per row in memory, like
// nullable scalars: a null row's slot is zero-filled and Valid marks it. On
// the wire Milvus carries them compacted instead: valid_data has one entry
// per row but the vector data holds only the non-null rows (pymilvus sends
// and reads them that way). expandVectors and compactVectors convert.

// expandVectors spreads wire vector data of w elements per row over
// len(valid) rows. Data that already has a slot for every row is returned as
// it is; otherwise it must hold exactly the non-null rows.
func expandVectors[T any](name string, data []T, w int, valid []bool) ([]T, error) {
	if valid == nil || len(data) == len(valid)*w {
		return data, nil
	}
	n := 0
	for _, ok := range valid {
		if ok {
			n++
		}
	}
	if len(data) != n*w {
		return nil, fmt.Errorf("column: field %q: vector data holds %d rows but valid_data marks %d of %d rows as not null",
			name, len(data)/max(w, 1), n, len(valid))
	}
	out := make([]T, len(valid)*w)
	j := 0
	for i, ok := range valid {
		if ok {
			copy(out[i*w:(i+1)*w], data[j*w:(j+1)*w])
			j++
		}
	}
	return out, nil
}

// compactVectors keeps only the non-null rows of full vector data of w
// elements per row, the wire form of a nullable vector column.
func compactVectors[T any](data []T, w int, valid []bool) []T {
	if valid == nil {
		return data
	}
	out := make([]T, 0, len(data))
	for i, ok := range valid {
		if ok {
			out = append(out, data[i*w:(i+1)*w]...)
		}
	}
	return out
}

// allNull reports whether valid marks every one of at least one row null:
// then a client may send a vector field with no data at all.
func allNull(valid []bool) bool {
	for _, ok := range valid {
		if ok {
			return false
		}
	}
	return len(valid) > 0
}
