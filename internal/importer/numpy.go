package importer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// npyArray is a decoded NumPy .npy file (format versions 1-3): C-ordered,
// little-endian or byte-sized elements, 1-D (one scalar per row) or 2-D
// (one vector per row).
type npyArray struct {
	kind     byte // 'b' bool, 'i' int, 'u' uint, 'f' float, 'U' unicode, 'S' bytes
	itemSize int
	rows     int
	width    int // elements per row (1 for 1-D)
	ndim     int
	data     []byte
}

var (
	npyMagic    = []byte("\x93NUMPY")
	npyDescr    = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran  = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape    = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
	errNotNumpy = errors.New("not a NumPy .npy file")
)

// parseNpy decodes the header of an .npy file and checks its data length.
func parseNpy(b []byte) (*npyArray, error) {
	if len(b) < 10 || !bytes.Equal(b[:6], npyMagic) {
		return nil, errNotNumpy
	}
	major := b[6]
	var hlen, off int
	switch major {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errNotNumpy
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return nil, fmt.Errorf("NumPy format version %d is not supported", major)
	}
	if off+hlen > len(b) {
		return nil, errors.New("the NumPy header is truncated")
	}
	header := string(b[off : off+hlen])
	d := npyDescr.FindStringSubmatch(header)
	fo := npyFortran.FindStringSubmatch(header)
	sh := npyShape.FindStringSubmatch(header)
	if d == nil || fo == nil || sh == nil {
		return nil, fmt.Errorf("the NumPy header %q is not valid", header)
	}
	if fo[1] == "True" {
		return nil, errors.New("Fortran-ordered NumPy arrays are not supported")
	}
	a := &npyArray{data: b[off+hlen:]}
	descr := d[1]
	if len(descr) < 3 {
		return nil, fmt.Errorf("the NumPy dtype %q is not supported", descr)
	}
	order := descr[0]
	a.kind = descr[1]
	size, err := strconv.Atoi(descr[2:])
	if err != nil {
		return nil, fmt.Errorf("the NumPy dtype %q is not supported", descr)
	}
	switch a.kind {
	case 'b', 'i', 'u', 'f', 'S':
		a.itemSize = size
	case 'U':
		a.itemSize = 4 * size // UTF-32 code units
	default:
		return nil, fmt.Errorf("the NumPy dtype %q is not supported (object arrays cannot be imported)", descr)
	}
	if order == '>' && a.itemSize > 1 && a.kind != 'S' {
		return nil, fmt.Errorf("big-endian NumPy dtype %q is not supported", descr)
	}
	var dims []int
	for _, p := range strings.Split(sh[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the NumPy shape (%s) is not valid", sh[1])
		}
		dims = append(dims, n)
	}
	a.ndim = len(dims)
	switch len(dims) {
	case 1:
		a.rows, a.width = dims[0], 1
	case 2:
		a.rows, a.width = dims[0], dims[1]
	default:
		return nil, fmt.Errorf("a NumPy array of %d dimensions cannot be imported (1 or 2 are)", len(dims))
	}
	if want := a.rows * a.width * a.itemSize; len(a.data) < want {
		return nil, fmt.Errorf("the NumPy data is truncated: %d bytes, the shape needs %d", len(a.data), want)
	}
	return a, nil
}

// scalar returns element j of the array's data as a file value.
func (a *npyArray) scalar(j int) (any, error) {
	e := a.data[j*a.itemSize : (j+1)*a.itemSize]
	switch a.kind {
	case 'b':
		return e[0] != 0, nil
	case 'i':
		switch a.itemSize {
		case 1:
			return int64(int8(e[0])), nil
		case 2:
			return int64(int16(binary.LittleEndian.Uint16(e))), nil
		case 4:
			return int64(int32(binary.LittleEndian.Uint32(e))), nil
		case 8:
			return int64(binary.LittleEndian.Uint64(e)), nil
		}
	case 'u':
		switch a.itemSize {
		case 1:
			return int64(e[0]), nil
		case 2:
			return int64(binary.LittleEndian.Uint16(e)), nil
		case 4:
			return int64(binary.LittleEndian.Uint32(e)), nil
		}
	case 'f':
		switch a.itemSize {
		case 4:
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(e))), nil
		case 8:
			return math.Float64frombits(binary.LittleEndian.Uint64(e)), nil
		}
	case 'S':
		return string(bytes.TrimRight(e, "\x00")), nil
	case 'U':
		var sb strings.Builder
		for k := 0; k+4 <= len(e); k += 4 {
			r := rune(binary.LittleEndian.Uint32(e[k:]))
			if r == 0 {
				break
			}
			if !utf8.ValidRune(r) {
				return nil, errors.New("the string is not valid Unicode")
			}
			sb.WriteRune(r)
		}
		return sb.String(), nil
	}
	return nil, fmt.Errorf("NumPy elements of kind %q and %d bytes are not supported", a.kind, a.itemSize)
}

// cell returns row i as a file value: a scalar for 1-D arrays; for 2-D
// ones raw bytes (byte-sized elements), []float32 (float32) or a list.
func (a *npyArray) cell(i int) (any, error) {
	if a.ndim == 1 {
		return a.scalar(i)
	}
	row := a.data[i*a.width*a.itemSize : (i+1)*a.width*a.itemSize]
	switch {
	case a.itemSize == 1 && (a.kind == 'u' || a.kind == 'i'):
		return row, nil
	case a.kind == 'f' && a.itemSize == 4:
		out := make([]float32, a.width)
		for k := range out {
			out[k] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*k:]))
		}
		return out, nil
	}
	out := make([]any, a.width)
	for k := range out {
		v, err := a.scalar(i*a.width + k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// numpySource is a column-based import: one .npy file per field, each
// named after its field ("$meta.npy" for the dynamic field).
type numpySource struct {
	schema *schemapb.CollectionSchema
	names  []string
	arrays []*npyArray
	rows   int
}

func newNumpySource(schema *schemapb.CollectionSchema, paths []string, data [][]byte) (*numpySource, error) {
	s := &numpySource{schema: schema, rows: -1}
	seen := map[string]bool{}
	for i, p := range paths {
		name := strings.TrimSuffix(path.Base(p), ".npy")
		if seen[name] {
			return nil, fmt.Errorf("two NumPy files for field %q", name)
		}
		seen[name] = true
		a, err := parseNpy(data[i])
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", p, err)
		}
		if f := fieldNamed(schema, name); f != nil {
			switch vec := isVectorType(f.GetDataType()); {
			case f.GetDataType() == schemapb.DataType_SparseFloatVector || f.GetDataType() == schemapb.DataType_Array:
				return nil, fmt.Errorf("file %s: %s fields cannot be imported from NumPy files", p, f.GetDataType())
			case vec && a.ndim != 2:
				return nil, fmt.Errorf("file %s: field %q is a vector, but the array is %d-D (2-D expected)", p, name, a.ndim)
			case !vec && a.ndim != 1:
				return nil, fmt.Errorf("file %s: field %q is a scalar, but the array is %d-D (1-D expected)", p, name, a.ndim)
			}
		}
		if s.rows >= 0 && a.rows != s.rows {
			return nil, fmt.Errorf("file %s has %d rows, %s has %d", p, a.rows, paths[0], s.rows)
		}
		s.rows = a.rows
		s.names = append(s.names, name)
		s.arrays = append(s.arrays, a)
	}
	if _, err := newBatch(schema, s.names); err != nil {
		return nil, err
	}
	return s, nil
}

func isVectorType(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector, schemapb.DataType_SparseFloatVector:
		return true
	}
	return false
}

func (s *numpySource) numRows() int { return max(s.rows, 0) }

func (s *numpySource) read(lo, hi int) (*batch, error) {
	return fillColumns(s.schema, s.names, lo, hi, func(k, i int) (any, error) { return s.arrays[k].cell(i) })
}
