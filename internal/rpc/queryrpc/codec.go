package queryrpc

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/plan"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// encodeRead converts a plan.Read into its message.
func encodeRead(r *plan.Read) (*querynodev1.Read, error) {
	var templates map[string][]byte
	if r.Templates != nil {
		templates = make(map[string][]byte, len(r.Templates))
		for k, v := range r.Templates {
			b, err := proto.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("queryrpc: template value %q: %w", k, err)
			}
			templates[k] = b
		}
	}
	return &querynodev1.Read{
		CollectionId: r.CollectionID, PartitionIds: r.PartitionIDs, Filter: r.Filter, Templates: templates,
		Timezone: r.Timezone, OutputFieldIds: r.OutputFields, GuaranteeTs: r.GuaranteeTS, Strong: r.Strong,
		IgnoreGrowing: r.IgnoreGrowing, ExpireBefore: optional(r.ExpireBefore, r.HasExpireBefore), Vchannels: r.VChannels,
		Segments: r.Segments, ReadTs: r.ReadTS,
	}, nil
}

// decodeRead converts a Read message into a plan.Read.
func decodeRead(m *querynodev1.Read) (plan.Read, error) {
	var templates map[string]*schemapb.TemplateValue
	if m.GetTemplates() != nil {
		templates = make(map[string]*schemapb.TemplateValue, len(m.GetTemplates()))
		for k, b := range m.GetTemplates() {
			v := &schemapb.TemplateValue{}
			if err := proto.Unmarshal(b, v); err != nil {
				return plan.Read{}, fmt.Errorf("queryrpc: template value %q: %w", k, err)
			}
			templates[k] = v
		}
	}
	return plan.Read{
		CollectionID: m.GetCollectionId(), PartitionIDs: m.GetPartitionIds(), Filter: m.GetFilter(),
		Templates: templates, Timezone: m.GetTimezone(), OutputFields: m.GetOutputFieldIds(),
		GuaranteeTS: m.GetGuaranteeTs(), Strong: m.GetStrong(), IgnoreGrowing: m.GetIgnoreGrowing(),
		ExpireBefore: m.GetExpireBefore(), HasExpireBefore: m.ExpireBefore != nil,
		VChannels: m.GetVchannels(), Segments: m.GetSegments(), ReadTS: m.GetReadTs(),
	}, nil
}

func floatArrays(rows [][]float32) []*querynodev1.Floats {
	if rows == nil {
		return nil
	}
	out := make([]*querynodev1.Floats, len(rows))
	for i, r := range rows {
		out[i] = &querynodev1.Floats{Data: r}
	}
	return out
}

func floatRows(arrs []*querynodev1.Floats) [][]float32 {
	if arrs == nil {
		return nil
	}
	out := make([][]float32, len(arrs))
	for i, a := range arrs {
		out[i] = a.GetData()
	}
	return out
}

// optional returns a pointer to v when set, for a proto3 optional field.
func optional[T any](v T, set bool) *T {
	if !set {
		return nil
	}
	return &v
}

// EncodeSearch converts a search into its request message.
func EncodeSearch(s *plan.Search) (*querynodev1.SearchRequest, error) {
	read, err := encodeRead(&s.Read)
	if err != nil {
		return nil, err
	}
	m := &querynodev1.SearchRequest{
		Read: read, FieldId: s.FieldID, Metric: s.Metric,
		Vectors: floatArrays(s.Vectors), Binary: s.Binary, Sparse: s.Sparse, EmbLists: floatArrays(s.EmbLists),
		ElementLevel: s.ElementLevel, DropRatioSearch: s.DropRatioSearch, RefineFactor: int64(s.RefineFactor),
		TopK: int64(s.TopK), Ef: int64(s.Ef), Nprobe: int64(s.Nprobe),
		Radius: optional(s.Radius, s.HasRadius), RangeFilter: optional(s.RangeFilter, s.HasRange),
		After:          optional(s.After, s.HasAfter),
		GroupByFieldId: s.GroupByField, GroupSize: int64(s.GroupSize), StrictGroupSize: s.StrictGroupSize,
		NullQueries: s.NullQueries, RefineK: s.RefineK, RbqBitsQuery: int64(s.RbqBitsQuery),
	}
	if s.BM25 != nil {
		m.Bm25 = &querynodev1.BM25{K1: s.BM25.K1, B: s.BM25.B, Stats: EncodeBM25Stats(s.BM25.Stats)}
	}
	return m, nil
}

// EncodeBM25Stats converts full-text search statistics into their message
// (nil for nil).
func EncodeBM25Stats(st *plan.BM25Stats) *querynodev1.BM25Stats {
	if st == nil {
		return nil
	}
	return &querynodev1.BM25Stats{Rows: st.Rows, TotalLen: st.TotalLen, Terms: st.Terms, Df: st.DF}
}

// DecodeBM25Stats converts a statistics message into plan.BM25Stats (nil
// for nil); the terms must be sorted and distinct, each with its count.
func DecodeBM25Stats(m *querynodev1.BM25Stats) (*plan.BM25Stats, error) {
	if m == nil {
		return nil, nil
	}
	if len(m.GetDf()) != len(m.GetTerms()) {
		return nil, fmt.Errorf("queryrpc: BM25 statistics with %d document frequencies for %d terms", len(m.GetDf()), len(m.GetTerms()))
	}
	for i := 1; i < len(m.GetTerms()); i++ {
		if m.GetTerms()[i] <= m.GetTerms()[i-1] {
			return nil, fmt.Errorf("queryrpc: BM25 statistics terms are not sorted and distinct at %d", i)
		}
	}
	if m.GetRows() < 0 || m.GetTotalLen() < 0 {
		return nil, fmt.Errorf("queryrpc: BM25 statistics with %d rows of total length %g", m.GetRows(), m.GetTotalLen())
	}
	return &plan.BM25Stats{Rows: m.GetRows(), TotalLen: m.GetTotalLen(), Terms: m.GetTerms(), DF: m.GetDf()}, nil
}

// DecodeSearch converts a search request message into a plan.Search.
func DecodeSearch(m *querynodev1.SearchRequest) (*plan.Search, error) {
	if m.GetRead() == nil {
		return nil, fmt.Errorf("queryrpc: search request without a read")
	}
	read, err := decodeRead(m.GetRead())
	if err != nil {
		return nil, err
	}
	s := &plan.Search{
		Read: read, FieldID: m.GetFieldId(), Metric: m.GetMetric(),
		Vectors: floatRows(m.GetVectors()), Binary: m.GetBinary(), Sparse: m.GetSparse(), EmbLists: floatRows(m.GetEmbLists()),
		ElementLevel: m.GetElementLevel(), DropRatioSearch: m.GetDropRatioSearch(), RefineFactor: int(m.GetRefineFactor()),
		TopK: int(m.GetTopK()), Ef: int(m.GetEf()), Nprobe: int(m.GetNprobe()),
		Radius: m.GetRadius(), HasRadius: m.Radius != nil, RangeFilter: m.GetRangeFilter(), HasRange: m.RangeFilter != nil,
		After: m.GetAfter(), HasAfter: m.After != nil,
		GroupByField: m.GetGroupByFieldId(), GroupSize: int(m.GetGroupSize()), StrictGroupSize: m.GetStrictGroupSize(),
		NullQueries: m.GetNullQueries(), RefineK: m.GetRefineK(), RbqBitsQuery: int(m.GetRbqBitsQuery()),
	}
	if b := m.GetBm25(); b != nil {
		stats, err := DecodeBM25Stats(b.GetStats())
		if err != nil {
			return nil, err
		}
		s.BM25 = &plan.BM25{K1: b.GetK1(), B: b.GetB(), Stats: stats}
	}
	return s, nil
}

// EncodeQuery converts a query into its request message.
func EncodeQuery(q *plan.Query) (*querynodev1.QueryRequest, error) {
	read, err := encodeRead(&q.Read)
	if err != nil {
		return nil, err
	}
	return &querynodev1.QueryRequest{Read: read, Limit: int64(q.Limit), Offset: int64(q.Offset), CountOnly: q.CountOnly}, nil
}

// DecodeQuery converts a query request message into a plan.Query.
func DecodeQuery(m *querynodev1.QueryRequest) (*plan.Query, error) {
	if m.GetRead() == nil {
		return nil, fmt.Errorf("queryrpc: query request without a read")
	}
	read, err := decodeRead(m.GetRead())
	if err != nil {
		return nil, err
	}
	return &plan.Query{Read: read, Limit: int(m.GetLimit()), Offset: int(m.GetOffset()), CountOnly: m.GetCountOnly()}, nil
}

// encodeColumns converts output columns into wire columns, sorted by field
// ID so that the message is deterministic.
func encodeColumns(cols map[int64]column.Column) []*schemapb.FieldData {
	if len(cols) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(cols))
	for id := range cols {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]*schemapb.FieldData, len(ids))
	for i, id := range ids {
		out[i] = column.ToFieldData("", id, cols[id])
	}
	return out
}

// decodeColumns converts wire columns back into output columns by field ID.
func decodeColumns(fds []*schemapb.FieldData) (map[int64]column.Column, error) {
	if len(fds) == 0 {
		return nil, nil
	}
	out := make(map[int64]column.Column, len(fds))
	for _, fd := range fds {
		c, err := decodeColumn(fd)
		if err != nil {
			return nil, err
		}
		out[fd.GetFieldId()] = c
	}
	return out, nil
}

// decodeColumn converts one wire column into a column. The wire column
// says everything the conversion needs (type, dim, element type), so the
// schema it is read against is made from it.
func decodeColumn(fd *schemapb.FieldData) (column.Column, error) {
	f := &schemapb.FieldSchema{Name: fd.GetFieldName(), FieldID: fd.GetFieldId(), DataType: fd.GetType()}
	if v := fd.GetVectors(); v != nil {
		f.TypeParams = append(f.TypeParams, dimParam(v.GetDim()))
		if va := v.GetVectorArray(); va != nil {
			f.ElementType = va.GetElementType()
		}
	}
	if a := fd.GetScalars().GetArrayData(); a != nil {
		f.ElementType = a.GetElementType()
	}
	c, err := column.FromFieldData(f, fd)
	if err != nil {
		return nil, fmt.Errorf("queryrpc: field %d: %w", fd.GetFieldId(), err)
	}
	if v := fd.GetValidData(); len(v) > 0 && c.Validity() == nil {
		column.SetValidity(c, v) // kinds whose decoder does not keep the mask
	}
	return c, nil
}

func dimParam(dim int64) *commonpb.KeyValuePair {
	return &commonpb.KeyValuePair{Key: "dim", Value: strconv.FormatInt(dim, 10)}
}

// EncodeSearchResult converts a search result into Milvus's result message
// (see SearchResponse in the proto).
func EncodeSearchResult(r *plan.SearchResult) (*schemapb.SearchResultData, error) {
	m := &schemapb.SearchResultData{NumQueries: int64(len(r.Hits)), Topks: make([]int64, len(r.Hits))}
	var ints []int64
	var strs []string
	var elems []int64
	hasElem := false
	for q, hits := range r.Hits {
		m.Topks[q] = int64(len(hits))
		m.TopK = max(m.TopK, int64(len(hits)))
		for _, h := range hits {
			switch pk := h.PK.(type) {
			case int64:
				ints = append(ints, pk)
			case string:
				strs = append(strs, pk)
			default:
				return nil, fmt.Errorf("queryrpc: primary key of type %T", h.PK)
			}
			m.Scores = append(m.Scores, h.Score)
			elems = append(elems, int64(h.Element)-1)
			hasElem = hasElem || h.Element != 0
		}
	}
	switch {
	case len(ints) > 0 && len(strs) > 0:
		return nil, fmt.Errorf("queryrpc: primary keys of two types in one result")
	case len(strs) > 0:
		m.Ids = &schemapb.IDs{IdField: &schemapb.IDs_StrId{StrId: &schemapb.StringArray{Data: strs}}}
	default:
		m.Ids = &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: ints}}}
	}
	if hasElem {
		m.ElementIndices = &schemapb.LongArray{Data: elems}
	}
	m.FieldsData = encodeColumns(r.Fields)
	if r.GroupValues != nil {
		m.GroupByFieldValue = column.ToFieldData("", 0, r.GroupValues)
	}
	return m, nil
}

// MarshalSearchResult encodes a search result as SearchResponse.result
// holds it: a serialized milvus.proto.schema.SearchResultData.
func MarshalSearchResult(r *plan.SearchResult) ([]byte, error) {
	m, err := EncodeSearchResult(r)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("queryrpc: search result: %w", err)
	}
	return b, nil
}

// UnmarshalSearchResult decodes SearchResponse.result.
func UnmarshalSearchResult(b []byte) (*plan.SearchResult, error) {
	m := &schemapb.SearchResultData{}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("queryrpc: search result: %w", err)
	}
	return DecodeSearchResult(m)
}

// DecodeSearchResult converts Milvus's result message back into a
// plan.SearchResult.
func DecodeSearchResult(m *schemapb.SearchResultData) (*plan.SearchResult, error) {
	ints := m.GetIds().GetIntId().GetData()
	strs := m.GetIds().GetStrId().GetData()
	n := len(ints) + len(strs)
	if len(m.GetScores()) != n {
		return nil, fmt.Errorf("queryrpc: search result with %d scores for %d hits", len(m.GetScores()), n)
	}
	elems := m.GetElementIndices().GetData()
	if elems != nil && len(elems) != n {
		return nil, fmt.Errorf("queryrpc: search result with %d element indices for %d hits", len(elems), n)
	}
	r := &plan.SearchResult{Hits: make([][]plan.Hit, len(m.GetTopks()))}
	at := 0
	for q, k := range m.GetTopks() {
		if k < 0 || at+int(k) > n {
			return nil, fmt.Errorf("queryrpc: search result topks exceed its %d hits", n)
		}
		hits := make([]plan.Hit, k)
		for i := range hits {
			h := &hits[i]
			if strs != nil {
				h.PK = strs[at]
			} else {
				h.PK = ints[at]
			}
			h.Score = m.GetScores()[at]
			if elems != nil {
				h.Element = int(elems[at] + 1)
			}
			at++
		}
		r.Hits[q] = hits
	}
	if at != n {
		return nil, fmt.Errorf("queryrpc: search result topks cover %d of its %d hits", at, n)
	}
	var err error
	if r.Fields, err = decodeColumns(m.GetFieldsData()); err != nil {
		return nil, err
	}
	if g := m.GetGroupByFieldValue(); g != nil {
		if r.GroupValues, err = decodeColumn(g); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// EncodeQueryResult converts a query result into its response message.
func EncodeQueryResult(r *plan.QueryResult) (*querynodev1.QueryResponse, error) {
	fds := encodeColumns(r.Fields)
	out := make([][]byte, len(fds))
	for i, fd := range fds {
		b, err := proto.Marshal(fd)
		if err != nil {
			return nil, fmt.Errorf("queryrpc: field %d: %w", fd.GetFieldId(), err)
		}
		out[i] = b
	}
	return &querynodev1.QueryResponse{FieldsData: out, Rows: int64(r.Rows), Count: r.Count}, nil
}

// DecodeQueryResult converts a query response message into a
// plan.QueryResult.
func DecodeQueryResult(m *querynodev1.QueryResponse) (*plan.QueryResult, error) {
	fds := make([]*schemapb.FieldData, len(m.GetFieldsData()))
	for i, b := range m.GetFieldsData() {
		fds[i] = &schemapb.FieldData{}
		if err := proto.Unmarshal(b, fds[i]); err != nil {
			return nil, fmt.Errorf("queryrpc: output column %d: %w", i, err)
		}
	}
	cols, err := decodeColumns(fds)
	if err != nil {
		return nil, err
	}
	return &plan.QueryResult{Fields: cols, Rows: int(m.GetRows()), Count: m.GetCount()}, nil
}

// encodeSegments converts served segments into their messages.
func encodeSegments(segs []plan.SegmentInfo) []*querynodev1.SegmentInfo {
	out := make([]*querynodev1.SegmentInfo, len(segs))
	for i, s := range segs {
		out[i] = &querynodev1.SegmentInfo{
			Id: s.ID, PartitionId: s.PartitionID, Rows: s.Rows, Growing: s.Growing, Indexed: s.Indexed, Level: int32(s.Level),
			NodeIds: s.NodeIDs,
		}
	}
	return out
}

// decodeSegments converts segment messages back into plan.SegmentInfo.
func decodeSegments(ms []*querynodev1.SegmentInfo) []plan.SegmentInfo {
	if ms == nil {
		return nil
	}
	out := make([]plan.SegmentInfo, len(ms))
	for i, m := range ms {
		out[i] = plan.SegmentInfo{
			ID: m.GetId(), PartitionID: m.GetPartitionId(), Rows: m.GetRows(), Growing: m.GetGrowing(), Indexed: m.GetIndexed(),
			Level: int(m.GetLevel()), NodeIDs: m.GetNodeIds(),
		}
	}
	return out
}

// encodeReplicas converts replicas into their messages.
func encodeReplicas(reps []plan.Replica) []*querynodev1.Replica {
	out := make([]*querynodev1.Replica, len(reps))
	for i, r := range reps {
		out[i] = &querynodev1.Replica{
			Id: r.ID, NodeIds: r.Nodes, Leaders: r.Leaders, Addresses: r.Addresses, ResourceGroup: r.ResourceGroup,
		}
	}
	return out
}

// decodeReplicas converts replica messages back into plan.Replica (nil
// when there are none, as a query node answers).
func decodeReplicas(ms []*querynodev1.Replica) []plan.Replica {
	if len(ms) == 0 {
		return nil
	}
	out := make([]plan.Replica, len(ms))
	for i, m := range ms {
		out[i] = plan.Replica{
			ID: m.GetId(), Nodes: m.GetNodeIds(), Leaders: m.GetLeaders(), Addresses: m.GetAddresses(),
			ResourceGroup: m.GetResourceGroup(),
		}
	}
	return out
}
