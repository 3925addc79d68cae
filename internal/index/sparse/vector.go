package sparse

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// MaxIndex is the largest dimension index a sparse vector may use: Milvus
// reserves 2^32-1.
const MaxIndex = math.MaxUint32 - 1

// Vector is a parsed sparse row: strictly ascending dimension indices and
// their values, Indices[i] paired with Values[i].
type Vector struct {
	Indices []uint32
	Values  []float32
}

// Len returns the number of non-zero entries.
func (v Vector) Len() int { return len(v.Indices) }

// Validate checks a sparse row in the Milvus wire format (n pairs of
// little-endian uint32 index and float32 value) as Milvus does: a whole
// number of 8-byte pairs, indices strictly ascending and below 2^32-1,
// values finite and not negative. An empty row is valid.
func Validate(row []byte) error {
	if row == nil {
		return errors.New("nil sparse float vector")
	}
	if len(row)%8 != 0 {
		return fmt.Errorf("invalid data length in sparse float vector: %d bytes is not a multiple of 8", len(row))
	}
	var prev uint32
	for i := 0; i < len(row)/8; i++ {
		idx := binary.LittleEndian.Uint32(row[8*i:])
		if idx > MaxIndex {
			return fmt.Errorf("invalid index %d in sparse float vector: must be less than 2^32-1", idx)
		}
		if i > 0 && idx <= prev {
			return fmt.Errorf("unsorted or same indices in sparse float vector (index %d after %d)", idx, prev)
		}
		prev = idx
		val := math.Float32frombits(binary.LittleEndian.Uint32(row[8*i+4:]))
		if math.IsNaN(float64(val)) || math.IsInf(float64(val), 0) {
			return fmt.Errorf("value of index %d in sparse float vector is NaN or Inf", idx)
		}
		if val < 0 {
			return fmt.Errorf("negative value %v of index %d in sparse float vector", val, idx)
		}
	}
	return nil
}

// Parse validates row (see Validate) and decodes it.
func Parse(row []byte) (Vector, error) {
	if err := Validate(row); err != nil {
		return Vector{}, err
	}
	return Decode(row), nil
}

// Decode decodes a row without validating it; a trailing partial pair is
// ignored. Use it for rows that were validated when they were written.
func Decode(row []byte) Vector {
	n := len(row) / 8
	v := Vector{Indices: make([]uint32, n), Values: make([]float32, n)}
	for i := 0; i < n; i++ {
		v.Indices[i] = binary.LittleEndian.Uint32(row[8*i:])
		v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(row[8*i+4:]))
	}
	return v
}

// Encode returns v in the Milvus wire format.
func (v Vector) Encode() []byte {
	out := make([]byte, 8*len(v.Indices))
	for i, idx := range v.Indices {
		binary.LittleEndian.PutUint32(out[8*i:], idx)
		binary.LittleEndian.PutUint32(out[8*i+4:], math.Float32bits(v.Values[i]))
	}
	return out
}

// Dim returns the dimension of a wire row as Milvus reports it: its largest
// index plus one, or 0 for an empty row.
func Dim(row []byte) int64 {
	if len(row) < 8 {
		return 0
	}
	n := len(row) / 8
	return int64(binary.LittleEndian.Uint32(row[8*(n-1):])) + 1
}

// Dot returns the inner product of two vectors. Products are added in
// ascending index order in float32, so every search path of this package
// (exact, inverted, WAND) computes bit-identical scores.
func Dot(a, b Vector) float32 {
	var s float32
	i, j := 0, 0
	for i < len(a.Indices) && j < len(b.Indices) {
		switch x, y := a.Indices[i], b.Indices[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += float32(a.Values[i] * b.Values[j])
			i++
			j++
		}
	}
	return s
}

// DotRow is Dot with b in the wire format, decoded on the fly.
func DotRow(a Vector, row []byte) float32 {
	var s float32
	i, j, n := 0, 0, len(row)/8
	for i < len(a.Indices) && j < n {
		y := binary.LittleEndian.Uint32(row[8*j:])
		switch x := a.Indices[i]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			s += float32(a.Values[i] * math.Float32frombits(binary.LittleEndian.Uint32(row[8*j+4:])))
			i++
			j++
		}
	}
	return s
}
