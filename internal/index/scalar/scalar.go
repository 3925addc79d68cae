package scalar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// Kind is a Milvus scalar index type.
type Kind uint8

// The scalar index kinds, numbered as in the file format.
const (
	Inverted Kind = 1 + iota
	Sort
	Bitmap
	Trie
)

// String returns the Milvus name of the kind.
func (k Kind) String() string {
	switch k {
	case Inverted:
		return "INVERTED"
	case Sort:
		return "STL_SORT"
	case Bitmap:
		return "BITMAP"
	case Trie:
		return "Trie"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind parses a Milvus scalar index type name (Trie is also accepted
// as TRIE). ok is false for any other name.
func ParseKind(s string) (Kind, bool) {
	switch s {
	case "INVERTED":
		return Inverted, true
	case "STL_SORT":
		return Sort, true
	case "BITMAP":
		return Bitmap, true
	case "Trie", "TRIE":
		return Trie, true
	}
	return 0, false
}

// BitmapCardinalityKey is the BITMAP build parameter Milvus validates; its
// value must be an integer in [1, 1000].
const BitmapCardinalityKey = "bitmap_cardinality_limit"

func isInt(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32, schemapb.DataType_Int64,
		schemapb.DataType_Timestamptz:
		return true
	}
	return false
}

func isFloat(t schemapb.DataType) bool {
	return t == schemapb.DataType_Float || t == schemapb.DataType_Double
}

func isString(t schemapb.DataType) bool {
	return t == schemapb.DataType_VarChar || t == schemapb.DataType_String
}

// Check reports whether an index of kind k may be built on field f with the
// given build parameters, with the rules Milvus applies: INVERTED on bool,
// integer, float, VarChar, Array of those, and JSON with a json_cast_type
// (checkJSONCast; the json_path is the caller's); STL_SORT on numeric and VarChar fields (Milvus 2.6); BITMAP on bool, integer,
// VarChar and Array of those, never on the primary key; Trie on VarChar.
// The error names the field and the index type.
func Check(k Kind, f *schemapb.FieldSchema, params map[string]string) error {
	t, name := f.GetDataType(), f.GetName()
	elem := f.GetElementType()
	switch k {
	case Inverted:
		switch {
		case t == schemapb.DataType_Bool, isInt(t), isFloat(t), isString(t):
		case t == schemapb.DataType_Array:
			if elem != schemapb.DataType_Bool && !isInt(elem) && !isFloat(elem) && !isString(elem) {
				return fmt.Errorf("INVERTED index is not supported on array field %s of %s elements", name, elem)
			}
		case t == schemapb.DataType_JSON:
			if err := checkJSONCast(params); err != nil {
				return err
			}
		default:
			return fmt.Errorf("INVERTED index is not supported on %s field %s", t, name)
		}
	case Sort:
		if !isInt(t) && !isFloat(t) && !isString(t) {
			return fmt.Errorf("STL_SORT are only supported on numeric or varchar field, field %s is %s", name, t)
		}
	case Bitmap:
		ok := t == schemapb.DataType_Bool || isInt(t) || isString(t) ||
			t == schemapb.DataType_Array && (elem == schemapb.DataType_Bool || isInt(elem) || isString(elem))
		if !ok {
			return fmt.Errorf("bitmap index are only supported on bool, int, string and array field, field %s is %s", name, describeType(f))
		}
		if f.GetIsPrimaryKey() {
			return fmt.Errorf("create bitmap index on primary key not supported: field %s", name)
		}
		if v, set := params[BitmapCardinalityKey]; set {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 1000 {
				return fmt.Errorf("failed to check bitmap cardinality limit, should be larger than 0 and smaller than 1000: %s=%q", BitmapCardinalityKey, v)
			}
		}
	case Trie:
		if !isString(t) {
			return fmt.Errorf("TRIE are only supported on varchar field, field %s is %s", name, t)
		}
	default:
		return fmt.Errorf("unknown scalar index kind %d", k)
	}
	return nil
}

// jsonCastTypes are the json_cast_type values (in upper case) Milvus 2.6
// accepts for an INVERTED index on a JSON path; JSON indexes the value
// itself, whatever its type.
var jsonCastTypes = map[string]bool{
	"BOOL": true, "DOUBLE": true, "VARCHAR": true,
	"ARRAY_BOOL": true, "ARRAY_DOUBLE": true, "ARRAY_VARCHAR": true, "JSON": true,
}

// checkJSONCast checks json_cast_type (any case) and json_cast_function
// (STRING_TO_DOUBLE, for DOUBLE only), worded as Milvus's checker words it.
func checkJSONCast(params map[string]string) error {
	ct, set := params["json_cast_type"]
	if !set {
		return errors.New("json index must specify cast type: missing parameter[missing_param=json_cast_type]")
	}
	up := strings.ToUpper(ct)
	if !jsonCastTypes[up] {
		return fmt.Errorf("json_cast_type %v is not supported: invalid parameter", ct)
	}
	if fn, set := params["json_cast_function"]; set {
		if !strings.EqualFold(fn, "STRING_TO_DOUBLE") {
			return fmt.Errorf("json_cast_function %v is not supported: invalid parameter", fn)
		}
		if up != "DOUBLE" {
			return fmt.Errorf("json_cast_function %v is not supported for json_cast_type %v: invalid parameter", fn, ct)
		}
	}
	return nil
}

func describeType(f *schemapb.FieldSchema) string {
	if f.GetDataType() == schemapb.DataType_Array {
		return "Array of " + f.GetElementType().String()
	}
	return f.GetDataType().String()
}

// keyType is the type of the dictionary keys.
type keyType uint8

const (
	keyInt keyType = 1 + iota
	keyFloat
	keyString
)

// Index is a scalar index over one field of one segment. It is immutable
// once built or decoded and safe for concurrent use.
type Index struct {
	kind  Kind
	kt    keyType
	array bool
	rows  int
	ints  []int64   // sorted distinct keys (kt == keyInt)
	flts  []float64 // kt == keyFloat
	strs  []string  // kt == keyString
	offs  []uint32  // len(keys)+1
	post  []uint32  // row numbers grouped by key
}

// Kind returns the index kind.
func (x *Index) Kind() Kind { return x.kind }

// Len returns the number of rows in the indexed segment.
func (x *Index) Len() int { return x.rows }

// Array reports whether the index is over an Array field (keys are elements).
func (x *Index) Array() bool { return x.array }

// Cardinality returns the number of distinct keys.
func (x *Index) Cardinality() int { return len(x.offs) - 1 }

// MemoryBytes estimates the memory the index holds.
func (x *Index) MemoryBytes() int64 {
	n := int64(len(x.ints)*8+len(x.flts)*8+len(x.offs)*4+len(x.post)*4) + int64(len(x.strs))*16
	for _, s := range x.strs {
		n += int64(len(s))
	}
	return n
}

// pair is one (key, row) posting before grouping.
type pair[T any] struct {
	k   T
	row uint32
}

// group sorts pairs by key then row, and splits them into distinct keys,
// offsets and postings. Rows appearing twice under one key are kept once.
func group[T any](ps []pair[T], compare func(a, b T) int) ([]T, []uint32, []uint32) {
	slices.SortFunc(ps, func(a, b pair[T]) int {
		if c := compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.row, b.row)
	})
	keys := []T{}
	offs := []uint32{0}
	post := make([]uint32, 0, len(ps))
	for i, p := range ps {
		newKey := i == 0 || compare(ps[i-1].k, p.k) != 0
		if newKey {
			if i > 0 {
				offs = append(offs, uint32(len(post)))
			}
			keys = append(keys, p.k)
		} else if ps[i-1].row == p.row {
			continue
		}
		post = append(post, p.row)
	}
	if len(keys) > 0 {
		offs = append(offs, uint32(len(post)))
	}
	return keys, offs, post
}

// Build indexes a column: Bools, Ints, Floats, Strings, or Arrays whose
// elements are one of those. Null rows and NaN values are left out. A build
// checks ctx between its collecting and sorting passes and returns
// ctx.Err() once it has ended.
func Build(ctx context.Context, k Kind, col column.Column) (*Index, error) {
	if k < Inverted || k > Trie {
		return nil, fmt.Errorf("scalar: unknown index kind %d", k)
	}
	if col.Len() > math.MaxUint32 {
		return nil, fmt.Errorf("scalar: %d rows exceed the format's limit", col.Len())
	}
	x := &Index{kind: k, rows: col.Len()}
	var c collector
	switch col := col.(type) {
	case *column.Arrays:
		x.array = true
		for i, sf := range col.Data {
			if !col.IsNull(i) && sf != nil {
				c.addElems(uint32(i), sf)
			}
		}
	case *column.Bools:
		for i, b := range col.Data {
			if !col.IsNull(i) {
				c.ints = append(c.ints, pair[int64]{boolKey(b), uint32(i)})
			}
		}
	case *column.Ints:
		c.ints = make([]pair[int64], 0, len(col.Data))
		for i, v := range col.Data {
			if !col.IsNull(i) {
				c.ints = append(c.ints, pair[int64]{v, uint32(i)})
			}
		}
	case *column.Floats:
		c.flts = make([]pair[float64], 0, len(col.Data))
		for i, v := range col.Data {
			if !col.IsNull(i) && !math.IsNaN(v) {
				c.flts = append(c.flts, pair[float64]{v, uint32(i)})
			}
		}
	case *column.Strings:
		c.strs = make([]pair[string], 0, len(col.Data))
		for i, v := range col.Data {
			if !col.IsNull(i) {
				c.strs = append(c.strs, pair[string]{v, uint32(i)})
			}
		}
	default:
		return nil, fmt.Errorf("scalar: cannot index a %s column", col.Type())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch t := elemOrType(col); {
	case isFloat(t):
		x.kt = keyFloat
		x.flts, x.offs, x.post = group(c.flts, cmp.Compare[float64])
	case isString(t):
		x.kt = keyString
		x.strs, x.offs, x.post = group(c.strs, strings.Compare)
	case isInt(t) || t == schemapb.DataType_Bool:
		x.kt = keyInt
		x.ints, x.offs, x.post = group(c.ints, cmp.Compare[int64])
	default:
		return nil, fmt.Errorf("scalar: cannot index %s elements", t)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return x, nil
}

func boolKey(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// collector gathers (key, row) pairs of one key type.
type collector struct {
	ints []pair[int64]
	flts []pair[float64]
	strs []pair[string]
}

// addElems posts row under every element of an array value.
func (c *collector) addElems(row uint32, sf *schemapb.ScalarField) {
	for _, b := range sf.GetBoolData().GetData() {
		c.ints = append(c.ints, pair[int64]{boolKey(b), row})
	}
	for _, v := range sf.GetIntData().GetData() {
		c.ints = append(c.ints, pair[int64]{int64(v), row})
	}
	for _, v := range sf.GetLongData().GetData() {
		c.ints = append(c.ints, pair[int64]{v, row})
	}
	for _, v := range sf.GetFloatData().GetData() {
		if f := float64(v); !math.IsNaN(f) {
			c.flts = append(c.flts, pair[float64]{f, row})
		}
	}
	for _, v := range sf.GetDoubleData().GetData() {
		if !math.IsNaN(v) {
			c.flts = append(c.flts, pair[float64]{v, row})
		}
	}
	for _, v := range sf.GetStringData().GetData() {
		c.strs = append(c.strs, pair[string]{v, row})
	}
}

func elemOrType(c column.Column) schemapb.DataType {
	if a, ok := c.(*column.Arrays); ok {
		return a.Elem
	}
	return c.Type()
}

// markRun sets out[r] for the postings of keys [a, b).
func (x *Index) markRun(a, b int, out []bool) {
	for _, r := range x.post[x.offs[a]:x.offs[b]] {
		out[r] = true
	}
}

// countRun returns the number of postings of keys [a, b).
func (x *Index) countRun(a, b int) int { return int(x.offs[b] - x.offs[a]) }

// between returns the run [a, b) of sorted keys lying between lo and hi,
// each bound inclusive or not; hiInf drops the upper bound.
func between[T cmp.Ordered](keys []T, lo, hi T, loIncl, hiIncl, hiInf bool) (int, int) {
	a := sort.Search(len(keys), func(i int) bool { return keys[i] > lo || loIncl && keys[i] == lo })
	b := len(keys)
	if !hiInf {
		b = sort.Search(len(keys), func(i int) bool { return keys[i] > hi || !hiIncl && keys[i] == hi })
	}
	return a, max(a, b)
}

// markBetween marks the postings of keys [a, b) and counts them.
func (x *Index) markBetween(a, b int, out []bool) (int, bool) {
	x.markRun(a, b, out)
	return x.countRun(a, b), true
}

// MarkInts sets out[r] for every row r holding an integer (or bool as 0/1)
// value v with lo <= v <= hi, and returns the number of postings marked.
// ok is false when the index is not over integers or out is not Len() long.
func (x *Index) MarkInts(lo, hi int64, out []bool) (n int, ok bool) {
	if x.kt != keyInt || len(out) != x.rows {
		return 0, false
	}
	a, b := between(x.ints, lo, hi, true, true, false)
	return x.markBetween(a, b, out)
}

// MarkFloats sets out[r] for every row r holding a float v between lo and
// hi, each bound inclusive or not (±Inf bounds are unbounded); NaN rows are
// never marked. ok is false when the index is not over floats.
func (x *Index) MarkFloats(lo, hi float64, loIncl, hiIncl bool, out []bool) (n int, ok bool) {
	if x.kt != keyFloat || len(out) != x.rows || math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, false
	}
	a, b := between(x.flts, lo, hi, loIncl, hiIncl, false)
	return x.markBetween(a, b, out)
}

// MarkStrings sets out[r] for every row r holding a string v between lo and
// hi (byte-wise order), each bound inclusive or not; hiInf makes the upper
// bound unbounded. ok is false when the index is not over strings.
func (x *Index) MarkStrings(lo, hi string, loIncl, hiIncl, hiInf bool, out []bool) (n int, ok bool) {
	if x.kt != keyString || len(out) != x.rows {
		return 0, false
	}
	a, b := between(x.strs, lo, hi, loIncl, hiIncl, hiInf)
	return x.markBetween(a, b, out)
}

// MarkPrefix sets out[r] for every row r holding a string that starts with
// prefix. ok is false when the index is not over strings.
func (x *Index) MarkPrefix(prefix string, out []bool) (n int, ok bool) {
	if x.kt != keyString || len(out) != x.rows {
		return 0, false
	}
	a := sort.Search(len(x.strs), func(i int) bool { return x.strs[i] >= prefix })
	b := a + sort.Search(len(x.strs)-a, func(i int) bool { return !strings.HasPrefix(x.strs[a+i], prefix) })
	return x.markBetween(a, b, out)
}
