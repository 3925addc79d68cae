package proxy

import (
	"math"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/index/registry"
	"github.com/strata-db/strata/internal/plan"
)

// denseVectorType reports whether t is a fixed-dimension vector type that
// search supports.
func denseVectorType(t schemapb.DataType) bool {
	switch t {
	case schemapb.DataType_FloatVector, schemapb.DataType_BinaryVector, schemapb.DataType_Float16Vector,
		schemapb.DataType_BFloat16Vector, schemapb.DataType_Int8Vector:
		return true
	}
	return false
}

// metricFits reports whether metric (upper case) applies to vectors of type
// t: HAMMING and JACCARD to BinaryVector, IP to SparseFloatVector (Milvus'
// BM25 is not implemented), L2, IP and COSINE to the others.
func metricFits(t schemapb.DataType, metric string) bool {
	switch t {
	case schemapb.DataType_BinaryVector:
		return metric == plan.MetricHamming || metric == plan.MetricJaccard || structureMetric(metric)
	case schemapb.DataType_SparseFloatVector:
		return metric == plan.MetricIP
	}
	return metric == plan.MetricL2 || metric == plan.MetricIP || metric == plan.MetricCosine
}

// structureMetric reports whether metric is SUBSTRUCTURE or SUPERSTRUCTURE,
// which only BIN_FLAT indexes (and so searches) take.
func structureMetric(metric string) bool {
	return metric == plan.MetricSubstructure || metric == plan.MetricSuperstructure
}

// defaultMetric is the metric of f when neither the request nor an index
// names one: HAMMING for binary vectors, IP for sparse ones, COSINE for the
// others.
func defaultMetric(f *schemapb.FieldSchema) string {
	switch f.GetDataType() {
	case schemapb.DataType_BinaryVector:
		return plan.MetricHamming
	case schemapb.DataType_SparseFloatVector:
		return plan.MetricIP
	}
	return plan.MetricCosine
}

// metricError is the error for a metric that does not fit the field.
func metricError(f *schemapb.FieldSchema, metric string) error {
	switch f.GetDataType() {
	case schemapb.DataType_SparseFloatVector:
		return errcode.Invalid("metric type %s is not supported for sparse float vectors, supported: [IP]", metric)
	case schemapb.DataType_BinaryVector:
		return errcode.Invalid("metric type %s not found or not supported, supported: [HAMMING JACCARD] (BinaryVector field %q)", metric, f.GetName())
	}
	if f.GetDataType() != schemapb.DataType_FloatVector || metric == plan.MetricHamming || metric == plan.MetricJaccard {
		return errcode.Invalid("metric type %s is not supported for the %s field %q, supported: [L2 IP COSINE]", metric, f.GetDataType(), f.GetName())
	}
	return errcode.Invalid("metric type %s not found or not supported, supported: [L2 IP COSINE]", metric)
}

// searchMetric resolves the metric of a search on f: the requested one, else
// the index's, else the default; it must fit the field and match the index.
func searchMetric(f *schemapb.FieldSchema, requested, indexMetric string) (string, error) {
	metric := strings.ToUpper(requested)
	switch {
	case metric == "":
		metric = indexMetric
		if metric == "" {
			metric = defaultMetric(f)
		}
	case !metricFits(f.GetDataType(), metric):
		return "", metricError(f, metric)
	case indexMetric != "" && metric != indexMetric:
		return "", errcode.Invalid("metric type not match: invalid parameter[expected=%s][actual=%s]", indexMetric, metric)
	}
	return metric, nil
}

// vectorIndexMetric checks the index type it (already defaulted) and the
// parameters of a vector index on f and returns its metric, upper case and
// defaulted.
func vectorIndexMetric(f *schemapb.FieldSchema, it string, params map[string]string) (string, error) {
	t := f.GetDataType()
	binary := t == schemapb.DataType_BinaryVector
	tp, known := registry.Lookup(it)
	forFloat := known && tp.Accepts(schemapb.DataType_FloatVector)
	forBinary := known && tp.Accepts(schemapb.DataType_BinaryVector)
	switch {
	case t == schemapb.DataType_Int8Vector && (forFloat || forBinary) && !tp.Accepts(t):
		return "", int8IndexError(it)
	case binary && !forBinary:
		return "", errcode.Invalid("data type %s of field %q can't build with index type %s, supported: [%s]",
			t, f.GetName(), it, strings.Join(registry.Names(t), " "))
	case !binary && forBinary && !forFloat:
		return "", errcode.Invalid("data type %s of field %q can't build with index type %s", t, f.GetName(), it)
	case !binary && !forFloat:
		return "", vectorIndexTypeError(f, it)
	}
	mt := strings.ToUpper(params["metric_type"])
	if mt == "" {
		mt = defaultMetric(f)
	}
	if !metricFits(t, mt) || structureMetric(mt) && !tp.AllowsMetric(mt) {
		return "", metricError(f, mt)
	}
	if err := tp.Check(f, params); err != nil {
		return "", errcode.Invalid("%v", err)
	}
	return mt, nil
}

// placeholderType is the query-vector type that matches fields of type t.
func placeholderType(t schemapb.DataType) commonpb.PlaceholderType {
	switch t {
	case schemapb.DataType_BinaryVector:
		return commonpb.PlaceholderType_BinaryVector
	case schemapb.DataType_Float16Vector:
		return commonpb.PlaceholderType_Float16Vector
	case schemapb.DataType_BFloat16Vector:
		return commonpb.PlaceholderType_BFloat16Vector
	case schemapb.DataType_Int8Vector:
		return commonpb.PlaceholderType_Int8Vector
	}
	return commonpb.PlaceholderType_FloatVector
}

// queryVectors parses the query vectors of a search on f: float32 vectors
// for FloatVector, Float16Vector, BFloat16Vector and Int8Vector fields (half
// precision and int8 queries are widened; half-precision fields also take
// float32 queries), packed vectors for BinaryVector fields.
func queryVectors(raw []byte, f *schemapb.FieldSchema) ([][]float32, [][]byte, error) {
	t := f.GetDataType()
	dim, _ := column.Dim(f)
	pg := &commonpb.PlaceholderGroup{}
	if err := proto.Unmarshal(raw, pg); err != nil {
		return nil, nil, errcode.Invalid("the placeholder group is malformed: %v", err)
	}
	if len(pg.GetPlaceholders()) != 1 {
		return nil, nil, errcode.Invalid("expected one placeholder, got %d", len(pg.GetPlaceholders()))
	}
	ph := pg.GetPlaceholders()[0]
	if t == schemapb.DataType_FloatVector || (ph.GetType() == commonpb.PlaceholderType_FloatVector &&
		(t == schemapb.DataType_Float16Vector || t == schemapb.DataType_BFloat16Vector)) {
		v, err := parsePlaceholders(raw, dim)
		return v, nil, err
	}
	if ph.GetType() != placeholderType(t) {
		return nil, nil, errcode.Invalid("query vectors of type %s do not match the %s field %q", ph.GetType(), t, f.GetName())
	}
	if len(ph.GetValues()) == 0 {
		return nil, nil, errcode.Invalid("no query vectors were sent")
	}
	w := column.VectorWidth(t, dim)
	for i, b := range ph.GetValues() {
		if len(b) != w {
			return nil, nil, errcode.Invalid("query vector %d has %d bytes, but the %s field %q of dim %d needs %d",
				i, len(b), t, f.GetName(), dim, w)
		}
	}
	if t == schemapb.DataType_BinaryVector {
		return nil, ph.GetValues(), nil
	}
	decode := column.WidenFunc(t)
	out := make([][]float32, len(ph.GetValues()))
	for i, b := range ph.GetValues() {
		v := make([]float32, dim)
		decode(v, b)
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, nil, errcode.Invalid("query vector %d contains NaN or Inf", i)
			}
		}
		out[i] = v
	}
	return out, nil, nil
}

// rowVectors returns rows of a vector column as query vectors: float32 for
// float, half-precision and int8 columns, packed for binary ones.
func rowVectors(c column.Column, rows []int) ([][]float32, [][]byte, error) {
	switch c := c.(type) {
	case *column.FloatVectors:
		out := make([][]float32, len(rows))
		for j, i := range rows {
			out[j] = c.Row(i)
		}
		return out, nil, nil
	case *column.ByteVectors:
		if c.T == schemapb.DataType_BinaryVector {
			out := make([][]byte, len(rows))
			for j, i := range rows {
				out[j] = c.Row(i)
			}
			return nil, out, nil
		}
		decode := column.WidenFunc(c.T)
		out := make([][]float32, len(rows))
		for j, i := range rows {
			out[j] = make([]float32, c.Dim)
			decode(out[j], c.Row(i))
		}
		return out, nil, nil
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	return nil, nil, errcode.Invalid("the vectors to search by could not be read")
}

// checkByteVectors rejects Float16 and BFloat16 vectors holding NaN or Inf,
// as Milvus does; binary and int8 vectors have no invalid values.
func checkByteVectors(name string, c *column.ByteVectors) error {
	if c.T != schemapb.DataType_Float16Vector && c.T != schemapb.DataType_BFloat16Vector {
		return nil
	}
	// An all-ones exponent is Inf or NaN: 5 bits in float16, 8 in bfloat16.
	mask := uint16(0x7c00)
	if c.T == schemapb.DataType_BFloat16Vector {
		mask = 0x7f80
	}
	for i := 0; i+1 < len(c.Data); i += 2 {
		if (uint16(c.Data[i])|uint16(c.Data[i+1])<<8)&mask == mask {
			return errcode.Invalid("field %q: the vector of row %d contains NaN or Inf", name, i/c.Width)
		}
	}
	return nil
}

// int8IndexError refuses index type it on an Int8Vector field: Milvus 2.6
// builds only HNSW (and AUTOINDEX, which is HNSW) on them.
func int8IndexError(it string) error {
	return errcode.Invalid("data type Int8Vector can't build with this index %s: invalid parameter[expected=valid index params][actual=invalid index params]", it)
}
