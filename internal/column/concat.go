package column

// Concat returns the rows of parts, in order, as one column of the parts'
// type. A single part is returned as is; otherwise each data slice is
// allocated once at its final size, so a column read from many binlogs
// keeps no spare capacity (appending part by part would keep up to as much
// again). Parts must share one type.
func Concat(parts []Column) Column {
	switch len(parts) {
	case 0:
		return nil
	case 1:
		return parts[0]
	}
	var dst Column
	switch p := parts[0].(type) {
	case *Bools:
		dst = &Bools{Data: make([]bool, 0, sumLen(parts, func(c Column) int { return len(c.(*Bools).Data) }))}
	case *Ints:
		dst = &Ints{T: p.T, Data: make([]int64, 0, sumLen(parts, func(c Column) int { return len(c.(*Ints).Data) }))}
	case *Floats:
		dst = &Floats{T: p.T, Data: make([]float64, 0, sumLen(parts, func(c Column) int { return len(c.(*Floats).Data) }))}
	case *Strings:
		dst = &Strings{T: p.T, Data: make([]string, 0, sumLen(parts, func(c Column) int { return len(c.(*Strings).Data) }))}
	case *FloatVectors:
		dst = &FloatVectors{
			Dim:  p.Dim,
			Data: make([]float32, 0, sumLen(parts, func(c Column) int { return len(c.(*FloatVectors).Data) })),
		}
	case *ByteVectors:
		dst = &ByteVectors{
			T: p.T, Dim: p.Dim, Width: p.Width,
			Data: make([]byte, 0, sumLen(parts, func(c Column) int { return len(c.(*ByteVectors).Data) })),
		}
	default:
		dst = parts[0].Take(nil) // an empty column of the same type and shape
	}
	for _, p := range parts {
		AppendAll(dst, p)
	}
	return dst
}

func sumLen(parts []Column, n func(Column) int) int {
	total := 0
	for _, p := range parts {
		total += n(p)
	}
	return total
}
