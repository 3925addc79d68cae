package analyzer

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestForFieldMultiLanguage(t *testing.T) {
	text := &schemapb.FieldSchema{Name: "text", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{
		{Key: ParamEnableAnalyzer, Value: "true"},
		{Key: ParamMultiAnalyzerParams, Value: `{"by_field":"lang","analyzers":{"en":{"type":"english"},"zh":{"type":"chinese"},"default":{"tokenizer":"whitespace"}},"alias":{"english":"en","cn":"zh"}}`},
	}}
	lang := &schemapb.FieldSchema{Name: "lang", DataType: schemapb.DataType_VarChar}
	s := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{text, lang}}
	f, err := ForField(s, text)
	require.NoError(t, err)
	require.Equal(t, "lang", f.ByField())
	words := func(text, lang string) []string {
		var out []string
		for _, tk := range f.Analyze(text, lang) {
			out = append(out, tk.Text)
		}
		return out
	}
	require.Equal(t, []string{"run", "fast"}, words("Running fast", "en"))
	require.Equal(t, []string{"run", "fast"}, words("Running fast", "english"))
	require.Equal(t, []string{"中文", "测试"}, words("中文测试", "cn"))
	require.Equal(t, []string{"Running", "fast"}, words("Running fast", "fr"))
	require.Equal(t, []string{"Running", "fast"}, words("Running fast", ""))
	require.Equal(t, "en", f.Resolve("english"))
	require.Equal(t, DefaultAnalyzerName, f.Resolve("fr"))
	require.True(t, f.HasAnalyzer("cn"))
	require.False(t, f.HasAnalyzer("fr"))
}

func TestForFieldSingle(t *testing.T) {
	text := &schemapb.FieldSchema{Name: "text", DataType: schemapb.DataType_VarChar, TypeParams: []*commonpb.KeyValuePair{
		{Key: ParamEnableAnalyzer, Value: "true"}, {Key: ParamAnalyzerParams, Value: `{"type":"english"}`},
	}}
	f, err := ForField(&schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{text}}, text)
	require.NoError(t, err)
	require.Empty(t, f.ByField())
	require.Equal(t, "run", f.Analyze("running", "ignored")[0].Text)
	on, err := Enabled(text)
	require.NoError(t, err)
	require.True(t, on)

	text.TypeParams[1].Value = `{"tokenizer":"nope"}`
	_, err = ForField(&schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{text}}, text)
	require.ErrorContains(t, err, "field text: invalid analyzer_params: unsupported tokenizer: nope")
}
