package proxy

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/plan"
)

// Array of Structs fields (Milvus 2.6). The stored schema keeps the struct
// fields in StructArrayFields (what describe returns) and one column field
// per sub-field in Fields, named "struct[sub]" (rootcoord.prepareStructFields).
// The proxy is the only place that sees structs: on insert and upsert it
// splits each struct column (FieldData_StructArrays) into its sub-field
// columns, which then travel as ordinary Array and ArrayOfVector columns;
// on output it joins them back into one struct column per struct field.

// structSubFields maps the field ID of every struct sub-field column of s
// to its struct field.
func structSubFields(s *schemapb.CollectionSchema) map[int64]*schemapb.StructArrayFieldSchema {
	if len(s.GetStructArrayFields()) == 0 {
		return nil
	}
	m := map[int64]*schemapb.StructArrayFieldSchema{}
	for _, sa := range s.GetStructArrayFields() {
		for _, f := range sa.GetFields() {
			m[f.GetFieldID()] = sa
		}
	}
	return m
}

// dropStructColumns removes the sub-field columns from s.Fields: clients
// see the sub-fields inside s.StructArrayFields only, as Milvus shows them.
func dropStructColumns(s *schemapb.CollectionSchema) {
	subs := structSubFields(s)
	if subs == nil {
		return
	}
	out := s.Fields[:0]
	for _, f := range s.Fields {
		if subs[f.GetFieldID()] == nil {
			out = append(out, f)
		}
	}
	s.Fields = out
}

// structField returns the struct field of col named name, or nil.
func structField(col *catalog.Collection, name string) *schemapb.StructArrayFieldSchema {
	for _, sa := range col.Schema.GetStructArrayFields() {
		if sa.GetName() == name {
			return sa
		}
	}
	return nil
}

// structCapacity is the max_capacity of struct field sa (its sub-fields share it).
func structCapacity(sa *schemapb.StructArrayFieldSchema) int {
	for _, f := range sa.GetFields() {
		if n := typeParamInt(f, "max_capacity"); n > 0 {
			return n
		}
	}
	return 0
}

// flattenStructs replaces every struct column of fds by its sub-field
// columns, renamed "struct[sub]" with the sub-fields' IDs, after checking
// that it holds each sub-field of the struct once, the same number of rows
// in each, and per row the same number of elements in each, at most the
// struct's max_capacity. Other columns pass through unchanged.
func flattenStructs(col *catalog.Collection, fds []*schemapb.FieldData) ([]*schemapb.FieldData, error) {
	if len(col.Schema.GetStructArrayFields()) == 0 {
		return fds, nil
	}
	out := make([]*schemapb.FieldData, 0, len(fds))
	for _, fd := range fds {
		sa := structField(col, fd.GetFieldName())
		if sa == nil {
			if fd.GetType() == schemapb.DataType_ArrayOfStruct {
				return nil, errcode.Invalid("field %q does not exist in collection %q", fd.GetFieldName(), col.Name)
			}
			out = append(out, fd)
			continue
		}
		subs, err := splitStruct(sa, fd)
		if err != nil {
			return nil, err
		}
		out = append(out, subs...)
	}
	return out, nil
}

// splitStruct checks the struct column fd of struct field sa and returns
// its sub-field columns (see flattenStructs).
func splitStruct(sa *schemapb.StructArrayFieldSchema, fd *schemapb.FieldData) ([]*schemapb.FieldData, error) {
	name := sa.GetName()
	sent := fd.GetStructArrays().GetFields()
	if fd.GetStructArrays() == nil {
		return nil, errcode.Invalid("field %q: the data of a struct array field must be struct arrays, got %s", name, fd.GetType())
	}
	if len(fd.GetValidData()) > 0 {
		for _, v := range fd.GetValidData() {
			if !v {
				return nil, errcode.Invalid("struct array field %s does not support null values", name)
			}
		}
	}
	byName := map[string]*schemapb.FieldData{}
	for _, sub := range sent {
		if byName[sub.GetFieldName()] != nil {
			return nil, errcode.Invalid("field %q of struct array field %s is sent more than once", sub.GetFieldName(), name)
		}
		byName[sub.GetFieldName()] = sub
	}
	var counts []int
	capacity := structCapacity(sa)
	out := make([]*schemapb.FieldData, 0, len(sa.GetFields()))
	for _, f := range sa.GetFields() {
		sub := byName[f.GetName()]
		if sub == nil {
			return nil, errcode.Invalid("field %q of struct array field %s is not passed", f.GetName(), name)
		}
		delete(byName, f.GetName())
		if sub.GetType() != schemapb.DataType_None && sub.GetType() != f.GetDataType() {
			return nil, errcode.Invalid("field %q of struct array field %s: data type %s does not match the schema type %s",
				f.GetName(), name, sub.GetType(), f.GetDataType())
		}
		c, err := column.FromFieldData(f, sub)
		if err != nil {
			return nil, errcode.Invalid("%v", err)
		}
		if counts == nil {
			counts = make([]int, c.Len())
			for i := range counts {
				counts[i] = -1
			}
		} else if c.Len() != len(counts) {
			return nil, errcode.Invalid("the number of rows of field %q of struct array field %s is %d, other fields have %d",
				f.GetName(), name, c.Len(), len(counts))
		}
		for i := range counts {
			n := elementCount(c, i)
			if counts[i] >= 0 && n != counts[i] {
				return nil, errcode.Invalid("the fields of struct array field %s hold different numbers of elements in row %d (%d and %d)",
					name, i, counts[i], n)
			}
			counts[i] = n
			if capacity > 0 && n > capacity {
				return nil, errcode.Invalid("the number of elements in struct array field %s exceeds max_capacity, row number: %d, elements: %d, max_capacity: %d",
					name, i, n, capacity)
			}
		}
		if va, ok := c.(*column.VectorArrays); ok {
			for i, r := range va.Data {
				for _, v := range r {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						return nil, errcode.Invalid("field %q of struct array field %s: the vectors of row %d contain NaN or Inf", f.GetName(), name, i)
					}
				}
			}
		}
		flat := proto.Clone(sub).(*schemapb.FieldData)
		flat.FieldName = catalog.StructSubFieldName(name, f.GetName())
		flat.FieldId = f.GetFieldID()
		flat.Type = f.GetDataType()
		out = append(out, flat)
	}
	for extra := range byName {
		return nil, errcode.Invalid("field %q does not exist in struct array field %s", extra, name)
	}
	return out, nil
}

// elementCount is the number of elements in row i of a sub-field column.
func elementCount(c column.Column, i int) int {
	switch c := c.(type) {
	case *column.Arrays:
		if c.Data[i] == nil {
			return 0
		}
		return column.ScalarLen(c.Data[i])
	case *column.VectorArrays:
		return c.Count(i)
	}
	return 0
}

// structOutput adds the sub-field columns of the struct field named name
// to o, reporting whether name is a struct field.
func structOutput(col *catalog.Collection, o *outputSpec, name string) bool {
	sa := structField(col, name)
	if sa == nil {
		return false
	}
	for _, f := range sa.GetFields() {
		o.add(f.GetFieldID())
	}
	return true
}

// joinStructs replaces the sub-field columns of fds by one struct column
// per struct field (FieldData_StructArrays, type ArrayOfStruct, at the
// place of its first sub-field), holding the sub-fields asked for under
// their own names, as Milvus returns them.
func joinStructs(col *catalog.Collection, fds []*schemapb.FieldData) []*schemapb.FieldData {
	subs := structSubFields(col.Schema)
	if subs == nil {
		return fds
	}
	out := fds[:0:0]
	joined := map[int64]*schemapb.FieldData{}
	for _, fd := range fds {
		sa := subs[fd.GetFieldId()]
		if sa == nil {
			out = append(out, fd)
			continue
		}
		st := joined[sa.GetFieldID()]
		if st == nil {
			st = &schemapb.FieldData{
				Type: schemapb.DataType_ArrayOfStruct, FieldName: sa.GetName(), FieldId: sa.GetFieldID(),
				Field: &schemapb.FieldData_StructArrays{StructArrays: &schemapb.StructArrayField{}},
			}
			joined[sa.GetFieldID()] = st
			out = append(out, st)
		}
		fd.FieldName = strings.TrimSuffix(strings.TrimPrefix(fd.GetFieldName(), sa.GetName()+"["), "]")
		fd.ValidData = nil
		st.GetStructArrays().Fields = append(st.GetStructArrays().Fields, fd)
	}
	return out
}

// structOutputNames rewrites the output field names of sub-field columns
// to their struct's name, once per struct.
func structOutputNames(col *catalog.Collection, o *outputSpec) {
	subs := structSubFields(col.Schema)
	if subs == nil {
		return
	}
	seen := map[string]bool{}
	names := o.names[:0:0]
	for _, n := range o.names {
		if f := col.Field(n); f != nil && subs[f.GetFieldID()] != nil {
			n = subs[f.GetFieldID()].GetName()
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	o.names = names
}

// isMaxSim reports whether mt is one of the embedding-list metrics.
func isMaxSim(mt string) bool {
	switch mt {
	case plan.MetricMaxSim, plan.MetricMaxSimCosine, plan.MetricMaxSimIP, plan.MetricMaxSimL2:
		return true
	}
	return false
}

// isPlainMetric reports whether mt scores single vectors (an
// element-level search or index on an embedding-list field).
func isPlainMetric(mt string) bool {
	return mt == plan.MetricL2 || mt == plan.MetricIP || mt == plan.MetricCosine
}

// checkEmbListIndex checks an index on the embedding-list field f and
// returns its metric (MAX_SIM_COSINE when none is given): a MAX_SIM metric
// for embedding-list searches, or L2, IP or COSINE for element-level ones.
func checkEmbListIndex(f *schemapb.FieldSchema, it string, params map[string]string) (string, error) {
	// Searches on an embedding-list field are exact MAX_SIM scans whatever
	// the index (nothing is built), so every type it takes returns exact
	// results.
	if tp, ok := registry.Lookup(it); !ok || !tp.Accepts(schemapb.DataType_ArrayOfVector) {
		return "", errcode.New(codePlainError, "index type %s is not supported for the array of vector field %s, supported: [HNSW AUTOINDEX FLAT IVF_FLAT]", it, f.GetName())
	}
	mt := strings.ToUpper(params["metric_type"])
	if mt == "" {
		mt = plan.MetricMaxSimCosine
	}
	if !isMaxSim(mt) && !isPlainMetric(mt) {
		return "", errcode.New(codePlainError, "metric type %s is not supported for the array of vector field %s, supported: [MAX_SIM MAX_SIM_COSINE MAX_SIM_IP MAX_SIM_L2 L2 IP COSINE]", mt, f.GetName())
	}
	return mt, nil
}

// embListMetric resolves the metric of a search on an embedding-list
// field: for an embedding-list search (element false) a MAX_SIM metric,
// for an element-level one L2, IP or COSINE. The one requested must be of
// that kind (and match the index's when the index's is); without one the
// index's is used when it is of that kind, else MAX_SIM_COSINE or COSINE.
func embListMetric(f *schemapb.FieldSchema, requested, indexMetric string, element bool) (string, error) {
	fits, def, kind := isMaxSim, plan.MetricMaxSimCosine, "an embedding list search"
	if element {
		fits, def, kind = isPlainMetric, plan.MetricCosine, "an element-level search"
	}
	if !fits(indexMetric) {
		indexMetric = ""
	}
	mt := strings.ToUpper(requested)
	switch {
	case mt == "" && indexMetric != "":
		return indexMetric, nil
	case mt == "":
		return def, nil
	case !fits(mt):
		return "", errcode.New(codePlainError, "metric type %s is not supported for %s on the array of vector field %s", mt, kind, f.GetName())
	case indexMetric != "" && mt != indexMetric:
		return "", errcode.Invalid("metric type not match: invalid parameter[expected=%s][actual=%s]", indexMetric, mt)
	}
	return mt, nil
}

// listQueries decodes the queries of a search on the embedding-list field
// f: embedding lists (EmbListFloatVector, see embListQueries) or plain
// float vectors for an element-level search (the second result).
func listQueries(raw []byte, f *schemapb.FieldSchema) ([][]float32, [][]float32, error) {
	pg := &commonpb.PlaceholderGroup{}
	if err := proto.Unmarshal(raw, pg); err != nil {
		return nil, nil, errcode.Invalid("the placeholder group is malformed: %v", err)
	}
	if len(pg.GetPlaceholders()) == 1 && pg.GetPlaceholders()[0].GetType() == commonpb.PlaceholderType_FloatVector {
		dim, _ := column.Dim(f)
		v, err := parsePlaceholders(raw, dim)
		return nil, v, err
	}
	lists, err := embListQueries(raw, f)
	return lists, nil, err
}

// embListQueries decodes the queries of an embedding-list search: one
// placeholder of type EmbListFloatVector, each value one query, a whole
// number (at least one) of float32 vectors of the field's dim.
func embListQueries(raw []byte, f *schemapb.FieldSchema) ([][]float32, error) {
	dim, _ := column.Dim(f)
	ph, err := onePlaceholder(raw)
	if err != nil {
		return nil, err
	}
	if ph.GetType() != commonpb.PlaceholderType_EmbListFloatVector {
		return nil, errcode.New(codePlainError, "the search on the array of vector field %s needs embedding lists of float vectors, got %s",
			f.GetName(), ph.GetType())
	}
	if len(ph.GetValues()) == 0 {
		return nil, errcode.Invalid("no query vectors were sent")
	}
	out := make([][]float32, len(ph.GetValues()))
	for i, b := range ph.GetValues() {
		if dim <= 0 || len(b) == 0 || len(b)%(4*dim) != 0 {
			return nil, errcode.Invalid("the embedding list %d holds %d bytes, not whole float vectors of dim %d", i, len(b), dim)
		}
		v := make([]float32, len(b)/4)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			if math.IsNaN(float64(v[j])) || math.IsInf(float64(v[j]), 0) {
				return nil, errcode.Invalid("embedding list %d contains NaN or Inf", i)
			}
		}
		out[i] = v
	}
	return out, nil
}

// codeSearchByIDs is the code Milvus gives a search by primary keys on an
// embedding-list field.
const codeSearchByIDs int32 = 999

// listSearchMetric is the metric of a validated search on the
// embedding-list field f (see embListMetric), the element-level kind when
// the requested metric is a plain one.
func listSearchMetric(f *schemapb.FieldSchema, requested, indexMetric string) string {
	element := isPlainMetric(strings.ToUpper(requested)) || requested == "" && isPlainMetric(indexMetric)
	m, _ := embListMetric(f, requested, indexMetric, element)
	return m
}

// firstPerPK keeps the first (best) hit of each primary key of a
// sub-search's best-first hits: an element-level search may return several
// elements of one row, and a hybrid search fuses rows, as Milvus collapses
// element hits to their row's best before it reranks.
func firstPerPK(h subHits) subHits {
	seen := make(map[any]bool, len(h.pks))
	out := subHits{metric: h.metric}
	for i, pk := range h.pks {
		if seen[pk] {
			continue
		}
		seen[pk] = true
		out.pks = append(out.pks, pk)
		out.scores = append(out.scores, h.scores[i])
	}
	return out
}

// elementIndices is the element_indices of a search result: the element
// offset of each hit of an element-level search (offsets is one per hit,
// -1 for a row-level hit); nil when no hit is an element hit.
func elementIndices(offsets []int64) *schemapb.LongArray {
	for _, o := range offsets {
		if o >= 0 {
			return &schemapb.LongArray{Data: offsets}
		}
	}
	return nil
}
