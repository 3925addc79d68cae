package registry

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// AutoIndex is the index type that lets the server choose (see Auto).
const AutoIndex = "AUTOINDEX"

// Built is an index as Type.Build returns it and Type.Load reads it back.
// What else it implements tells its reader how to use it: index.Index
// (float vectors), index.BinaryIndex (packed binary vectors),
// *sparse.Index (sparse vectors) or a filter index (*scalar.Index,
// *scalar.RTree).
type Built interface {
	// Len returns the number of indexed rows.
	Len() int
	// Marshal writes the index in its durable format.
	Marshal(w io.Writer) error
}

// Family is the kind of data an index type serves.
type Family uint8

const (
	// Any is AUTOINDEX's family: it serves every field.
	Any Family = iota
	// Dense types index float, half-precision or int8 vectors.
	Dense
	// Binary types index packed binary vectors.
	Binary
	// Sparse types index sparse float vectors.
	Sparse
	// Scalar types are the filter indexes of scalar fields.
	Scalar
	// Geometry types are the filter indexes of geometry fields.
	Geometry
)

// Type is one index type.
type Type struct {
	// Name is the Milvus index type name.
	Name string
	// Family is the kind of data it serves.
	Family Family
	// Aliases are other names a user may give for it (exact case).
	Aliases []string
	// FoldCase makes Lookup match Name and Aliases in any case.
	FoldCase bool
	// Fields are the data types of the fields it may index.
	Fields []schemapb.DataType
	// Metrics are the metric types it scores with (upper case); empty for
	// filter indexes.
	Metrics []string
	// SearchParams are the search parameters its searches read (such as
	// "ef" or "nprobe"); those of exact-search types are empty.
	SearchParams []string
	// ParseParams checks the build parameters of an index of this type on
	// field f (params holds every index parameter, index_type and
	// metric_type included) with Milvus's rules; its error is what the
	// proxy reports, wrapped as invalid input. Nil accepts any parameters.
	ParseParams func(f *schemapb.FieldSchema, params map[string]string) error
	// Build builds the index over one segment's column of the field, with
	// the same parameter parsing as ParseParams. It returns ctx.Err() soon
	// after ctx ends. Nil for types served by exact search, which build
	// nothing.
	Build func(ctx context.Context, c column.Column, params map[string]string) (Built, error)
	// FileKey is the durable key of the index file Build's result is
	// written under; empty when Build is nil.
	FileKey string
	// Load decodes an index file written under FileKey from a stream. The
	// vector indexes decode it straight into their final structures,
	// holding no copy of the whole file (see indexfile, Streaming reads).
	Load func(r io.Reader) (Built, error)
	// LoadFile, when set, decodes an index file that stays on local disk
	// (DISKANN): the index keeps r, which reads the file's size bytes, and
	// reads parts of it by position while it lives; r must stay open and
	// unchanged until the index is dropped. A query node loads such a
	// type from a local copy of the file (OnDisk); Load stays the way to
	// decode a stream.
	LoadFile func(r io.ReaderAt, size int64) (Built, error)
	// Mappable says that Load, given an *indexfile.Mapped, keeps slices of
	// it in place of copies and never writes them, so a query node may
	// serve the index from a read-only memory mapping (mmap.enabled).
	Mappable bool
}

// Accepts reports whether t may index fields of data type dt.
func (t *Type) Accepts(dt schemapb.DataType) bool { return slices.Contains(t.Fields, dt) }

// AllowsMetric reports whether t scores with metric (any case).
func (t *Type) AllowsMetric(metric string) bool {
	return slices.Contains(t.Metrics, strings.ToUpper(metric))
}

// Check runs t.ParseParams, if any.
func (t *Type) Check(f *schemapb.FieldSchema, params map[string]string) error {
	if t.ParseParams == nil {
		return nil
	}
	return t.ParseParams(f, params)
}

// named reports whether name names t: exactly, or in any case when fold
// (or t.FoldCase) is set.
func (t *Type) named(name string, fold bool) bool {
	return slices.ContainsFunc(append([]string{t.Name}, t.Aliases...), func(n string) bool {
		return n == name || (fold || t.FoldCase) && strings.EqualFold(n, name)
	})
}

// Types returns every index type, in table order. The types are shared:
// callers must not modify them.
func Types() []*Type { return slices.Clone(types) }

// Lookup returns the index type a user-given name names (AUTOINDEX
// included, see Auto). Names match exactly, except for types with
// FoldCase.
func Lookup(name string) (*Type, bool) {
	return find(name, false)
}

// find returns the type name names (see named).
func find(name string, fold bool) (*Type, bool) {
	for _, t := range types {
		if t.named(name, fold) {
			return t, true
		}
	}
	return nil, false
}

// ByFileKey returns the index type whose files are written under key.
func ByFileKey(key string) (*Type, bool) {
	for _, t := range types {
		if t.FileKey != "" && t.FileKey == key {
			return t, true
		}
	}
	return nil, false
}

// Load decodes the index file written under file key key from r. A
// reader with a Size method (bytes.Reader, indexfile.Sized) lets the
// decoder allocate exactly.
func Load(key string, r io.Reader) (Built, error) {
	t, ok := ByFileKey(key)
	if !ok {
		return nil, fmt.Errorf("unknown index file key %q", key)
	}
	return t.Load(r)
}

// Mappable reports whether the index files written under file key key
// may be loaded from a read-only mapping (Type.Mappable).
func Mappable(key string) bool {
	t, ok := ByFileKey(key)
	return ok && t.Mappable
}

// OnDisk reports whether the index files written under file key key are
// read from a local file by position (Type.LoadFile).
func OnDisk(key string) bool {
	t, ok := ByFileKey(key)
	return ok && t.LoadFile != nil
}

// LoadFile decodes the index file written under file key key that r
// reads (size bytes), for a type that is OnDisk; see Type.LoadFile.
func LoadFile(key string, r io.ReaderAt, size int64) (Built, error) {
	t, ok := ByFileKey(key)
	if !ok || t.LoadFile == nil {
		return nil, fmt.Errorf("index file key %q is not read from disk", key)
	}
	return t.LoadFile(r, size)
}

// Names returns the names of the index types that may index fields of
// data type dt, in table order (AUTOINDEX last).
func Names(dt schemapb.DataType) []string {
	var out []string
	for _, t := range types {
		if t.Accepts(dt) {
			out = append(out, t.Name)
		}
	}
	return out
}

// resolve returns the index type a recorded index type name names, in any
// case (the proxy accepted it as the user wrote it).
func resolve(name string) (*Type, bool) { return find(name, true) }

// Resolve returns the index type built for an index recorded as name (in
// any case) on a field of data type dt, with AUTOINDEX resolved by Auto.
func Resolve(name string, dt schemapb.DataType) (*Type, bool) {
	t, ok := resolve(name)
	if !ok || t.Name != AutoIndex {
		return t, ok
	}
	return Auto(dt)
}

// Builds reports whether an index recorded as name (in any case) may write
// an index file on some field: its type has a Build, or it is AUTOINDEX.
// Types served by exact search build nothing on any field.
func Builds(name string) bool {
	t, ok := resolve(name)
	return ok && (t.Build != nil || t.Name == AutoIndex)
}

// Auto returns the index type AUTOINDEX builds on fields of data type dt,
// as Milvus chooses it; ok is false for data types it builds nothing on.
func Auto(dt schemapb.DataType) (*Type, bool) {
	var name string
	switch dt {
	case schemapb.DataType_FloatVector, schemapb.DataType_Float16Vector, schemapb.DataType_BFloat16Vector,
		schemapb.DataType_Int8Vector:
		name = "HNSW"
	case schemapb.DataType_BinaryVector:
		name = "BIN_IVF_FLAT"
	case schemapb.DataType_SparseFloatVector:
		name = "SPARSE_INVERTED_INDEX"
	case schemapb.DataType_Geometry:
		name = "RTREE"
	case schemapb.DataType_Timestamptz:
		name = "STL_SORT"
	case schemapb.DataType_Bool, schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Float, schemapb.DataType_Double, schemapb.DataType_VarChar,
		schemapb.DataType_Array, schemapb.DataType_JSON:
		name = "INVERTED"
	default:
		return nil, false
	}
	return resolve(name)
}

// types is the table, in the order Names lists them. It is never modified.
var types = slices.Concat(denseTypes(), binaryTypes(), sparseTypes(), scalarTypes(), []*Type{autoType()})
