package expr

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/segment"
	"github.com/strata-db/strata/internal/textindex"
)

// Field IDs of the text schema.
const (
	txID    = 100 // Int64 pk
	txText  = 101 // VarChar, enable_analyzer + enable_match
	txPlain = 102 // VarChar without enable_match
	txNum   = 103 // Int64
	txMeta  = 104 // JSON
	txTitle = 105 // nullable VarChar, enable_match
)

func textSchema() *schemapb.CollectionSchema {
	match := []*commonpb.KeyValuePair{{Key: "max_length", Value: "512"}, {Key: "enable_analyzer", Value: "true"}, {Key: "enable_match", Value: "True"}}
	return &schemapb.CollectionSchema{Name: "docs", Fields: []*schemapb.FieldSchema{
		{FieldID: txID, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: txText, Name: "text", DataType: schemapb.DataType_VarChar, TypeParams: match},
		{FieldID: txPlain, Name: "plain", DataType: schemapb.DataType_VarChar},
		{FieldID: txNum, Name: "num", DataType: schemapb.DataType_Int64},
		{FieldID: txMeta, Name: "meta", DataType: schemapb.DataType_JSON},
		{FieldID: txTitle, Name: "title", DataType: schemapb.DataType_VarChar, Nullable: true, TypeParams: match},
	}}
}

var textRows = []string{
	"vector database search",          // 0
	"database vector search",          // 1
	"hybrid sparse retrieval",         // 2
	"Machine learning boosts search",  // 3
	"learning machine",                // 4
	"machine deep learning",           // 5
	"",                                // 6
	"the vector of a database, a DB!", // 7
}

// textSegment returns a segment holding the rows of b, the batch whose
// state (the text indexes) the query node keeps.
func textSegment(t *testing.T, b *mapBatch) *segment.Segment {
	t.Helper()
	seg, err := segment.New(segment.Info{ID: 1}, textSchema())
	require.NoError(t, err)
	require.NoError(t, seg.Append(b.cols, make([]uint64, b.n)))
	return seg
}

// evalOn evaluates e on a view of seg.
func evalOn(t *testing.T, e *Expr, seg *segment.Segment) []bool {
	t.Helper()
	var got []bool
	require.NoError(t, seg.Read(func(v *segment.View) error {
		var err error
		got, err = e.Eval(v)
		return err
	}))
	return got
}

// cachedIndex returns the text index seg keeps for field fid, failing if
// there is none yet.
func cachedIndex(t *testing.T, seg *segment.Segment, fid int64) *textindex.Index {
	t.Helper()
	var x *textindex.Index
	require.NoError(t, seg.Read(func(v *segment.View) error {
		x, _ = v.Memo(textIndexKey{fid}, func() any { return nil }).(*textindex.Index)
		return nil
	}))
	require.NotNil(t, x, "no index cached for field %d", fid)
	return x
}

func textBatch(texts []string) *mapBatch {
	n := len(texts)
	ids, nums := make([]int64, n), make([]int64, n)
	plain, titles := make([]string, n), make([]string, n)
	valid := make([]bool, n)
	for i := range n {
		ids[i], nums[i] = int64(i), int64(i*10)
		plain[i] = texts[i]
		titles[i] = texts[i]
		valid[i] = i%2 == 0
	}
	return &mapBatch{n: n, cols: map[int64]column.Column{
		txID:    &column.Ints{T: schemapb.DataType_Int64, Data: ids},
		txText:  &column.Strings{T: schemapb.DataType_VarChar, Data: texts},
		txPlain: &column.Strings{T: schemapb.DataType_VarChar, Data: plain},
		txNum:   &column.Ints{T: schemapb.DataType_Int64, Data: nums},
		txMeta:  &column.JSONs{Data: make([][]byte, n)},
		txTitle: &column.Strings{T: schemapb.DataType_VarChar, Data: titles, Nulls: column.Nulls{Valid: valid}},
	}}
}

func strTemplate(s string) *schemapb.TemplateValue {
	return &schemapb.TemplateValue{Val: &schemapb.TemplateValue_StringVal{StringVal: s}}
}

func TestTextMatchEval(t *testing.T) {
	tmpl := map[string]*schemapb.TemplateValue{"q": strTemplate("vector database"), "one": strTemplate("hybrid")}
	cases := []struct {
		expr string
		want []int
	}{
		{`text_match(text, 'vector')`, []int{0, 1, 7}},
		{`TEXT_MATCH(text, "VECTOR")`, []int{0, 1, 7}},
		{`text_match(text, 'hybrid machine')`, []int{2, 3, 4, 5}},
		{`text_match(text, 'search, retrieval!')`, []int{0, 1, 2, 3}},
		{`text_match(text, 'nothing here')`, []int{}},
		{`text_match(text, '')`, []int{}},
		{`text_match(text, 'vector database search', minimum_should_match=2)`, []int{0, 1, 7}},
		{`text_match(text, 'vector database search', MINIMUM_SHOULD_MATCH=3)`, []int{0, 1}},
		{`text_match(text, 'vector database search', minimum_should_match=4)`, []int{}},
		{`text_match(text, 'vector vector', minimum_should_match=2)`, []int{}},
		{`text_match(text, {one})`, []int{2}},
		{`phrase_match(text, 'vector database')`, []int{0}},
		{`phrase_match(text, 'vector database', 0)`, []int{0}},
		{`PHRASE_MATCH(text, "database vector", 0)`, []int{1}},
		{`phrase_match(text, 'vector database', 1)`, []int{0}},
		{`phrase_match(text, 'vector database', 2)`, []int{0, 1, 7}},
		{`phrase_match(text, 'machine learning', 1)`, []int{3, 5}},
		{`phrase_match(text, 'machine learning', 2)`, []int{3, 4, 5}},
		{`phrase_match(text, {q}, 0)`, []int{0}},
		{`phrase_match(text, '', 3)`, []int{}},
		// combined with other operators
		{`text_match(text, 'vector') and num > 0`, []int{1, 7}},
		{`text_match(text, 'vector') && id in [0, 7]`, []int{0, 7}},
		{`text_match(text, 'hybrid') or phrase_match(text, 'deep learning')`, []int{2, 5}},
		{`not text_match(text, 'vector')`, []int{2, 3, 4, 5, 6}},
		{`!(text_match(text, 'search') || num >= 50)`, []int{2, 4}},
		{`text_match(text, 'machine') and not phrase_match(text, 'learning machine')`, []int{3, 5}},
		{`text_match(text, 'learning') and plain like "%deep%"`, []int{5}},
		// a null text matches nothing, and "not" keeps it
		{`text_match(title, 'vector')`, []int{0}},
		{`not text_match(title, 'vector')`, []int{1, 2, 3, 4, 5, 6, 7}},
		{`phrase_match(title, 'machine deep')`, []int{}},
	}
	schema := textSchema()
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			e, err := Compile(tc.expr, schema, tmpl)
			require.NoError(t, err)
			// a batch without state (a transient index) and one that keeps it
			got, err := e.Eval(textBatch(textRows))
			require.NoError(t, err)
			require.Equal(t, tc.want, matching(got))
			seg := textSegment(t, textBatch(textRows))
			for range 2 {
				require.Equal(t, tc.want, matching(evalOn(t, e, seg)))
			}
		})
	}
}

func TestTextMatchFields(t *testing.T) {
	e, err := Compile(`text_match(text, 'a') and phrase_match(title, 'b') and num > 1`, textSchema(), nil)
	require.NoError(t, err)
	require.Equal(t, []int64{txText, txNum, txTitle}, e.Fields())
	require.Equal(t, `(text_match(text, "a") and phrase_match(title, "b", 0) and num > 1)`, e.String())
}

// TestTextMatchGrowing evaluates one filter on a batch that gains rows
// between evaluations: the cached index extends to the new rows.
func TestTextMatchGrowing(t *testing.T) {
	e, err := Compile(`phrase_match(text, 'vector search', 1) or text_match(text, 'retrieval')`, textSchema(), nil)
	require.NoError(t, err)
	seg, err := segment.New(segment.Info{ID: 1}, textSchema())
	require.NoError(t, err)
	var first *textindex.Index
	for n := 1; n <= len(textRows); n++ {
		b := textBatch(textRows[:n])
		one := &mapBatch{n: 1, cols: map[int64]column.Column{}}
		for id, c := range b.cols {
			one.cols[id] = c.Take([]int{n - 1})
		}
		require.NoError(t, seg.Append(one.cols, []uint64{0}))
		got := evalOn(t, e, seg)
		fresh, err := e.Eval(b)
		require.NoError(t, err)
		require.Equal(t, matching(fresh), matching(got), "after %d rows", n)
		x := cachedIndex(t, seg, txText)
		if first == nil {
			first = x
		}
		require.Same(t, first, x, "the index is built once and extended")
		require.Equal(t, n, x.Rows())
	}
	require.Equal(t, []int{0, 1, 2}, matching(evalOn(t, e, seg)))
}

func TestTextMatchErrors(t *testing.T) {
	runErr(t, []errCase{
		{`text_match(plain, 'a')`, `field "plain" does not enable match: invalid parameter`, 11},
		{`phrase_match(plain, 'a')`, `field "plain" does not enable match: invalid parameter`, 13},
		{`text_match(num, 'a')`, "text match operation on non-string is unsupported", 11},
		{`phrase_match(num, 'a', 1)`, "phrase match operation on non-string is unsupported", 13},
		{`text_match(meta, 'a')`, "text match operation on non-string is unsupported", 11},
		{`text_match(meta["k"], 'a')`, "text match operation on non-string is unsupported", 11},
		{`text_match('a', 'a')`, "text match operation on non-string is unsupported", 11},
		{`text_match(nope, 'a')`, "field nope not exist", 11},
		{`text_match(text)`, "text_match takes 2 or 3 arguments", 0},
		{`phrase_match(text, 'a', 1, 2)`, "phrase_match takes 2 or 3 arguments", 0},
		{`text_match(text, 1)`, "text_match needs a string query as its second argument, got integer 1", 17},
		{`text_match(text, plain)`, "needs a string query", 17},
		{`phrase_match(text, ['a'])`, "needs a string query", 19},
		{`text_match(text, 'a', 2)`, "the third argument of text_match must be minimum_should_match=k", 22},
		{`text_match(text, 'a', minimum_should_match=0)`, "minimum_should_match should be >= 1, got 0", 43},
		{`text_match(text, 'a', minimum_should_match=1001)`, "minimum_should_match should be <= 1000, got 1001", 43},
		{`text_match(text, 'a', minimum_should_match='2')`, "minimum_should_match should be a const integer expression", 43},
		{`phrase_match(text, 'a', -1)`, `"slop" should not be a negative interger. "slop" passed: -1`, 24},
		{`phrase_match(text, 'a', 4294967296)`, `"slop" exceeds the range of "uint32"`, 24},
		{`phrase_match(text, 'a', 1.5)`, `"slop" should be a const integer expression with "uint32" value`, 24},
		{`phrase_match(text, 'a', num)`, `"slop" should be a const integer expression`, 24},
		{`phrase_match(text, 'a', minimum_should_match=1)`, "phrase_match takes no named argument", 24},
		{`text_match(text, {missing})`, "missing", 17},
		{`num = 1`, "unexpected '=' (use == for equality)", 4},
		{`text_match(text, 'a') = 1`, "unexpected '='", 22},
	}, textSchema(), nil)
}
