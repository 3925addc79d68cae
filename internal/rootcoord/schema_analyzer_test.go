package rootcoord

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func textField(name string, params ...string) *schemapb.FieldSchema {
	return &schemapb.FieldSchema{
		Name: name, DataType: schemapb.DataType_VarChar,
		TypeParams: kv(append([]string{"max_length", "256"}, params...)...),
	}
}

func TestPrepareSchemaAnalyzer(t *testing.T) {
	for name, s := range map[string]*schemapb.CollectionSchema{
		"default analyzer":  with(textField("t", "enable_analyzer", "true")),
		"built-in":          with(textField("t", "enable_analyzer", "True", "analyzer_params", `{"type":"english"}`)),
		"custom":            with(textField("t", "enable_analyzer", "true", "analyzer_params", `{"tokenizer":"jieba","filter":["removepunct"]}`)),
		"params unused off": with(textField("t", "enable_analyzer", "false", "analyzer_params", `{"tokenizer":"nope"}`)),
		"multi-language": with(textField("lang"), textField("t", "enable_analyzer", "true", "multi_analyzer_params",
			`{"by_field":"lang","analyzers":{"en":{"type":"english"},"default":{}},"alias":{"english":"en"}}`)),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PrepareSchema(s)
			require.NoError(t, err)
		})
	}
	intField := &schemapb.FieldSchema{Name: "n", DataType: schemapb.DataType_Int64, TypeParams: kv("enable_analyzer", "true")}
	for name, tc := range map[string]struct {
		s   *schemapb.CollectionSchema
		msg string
	}{
		"not varchar":     {with(intField), "enable_analyzer is only supported on a VarChar field"},
		"bad flag":        {with(textField("t", "enable_analyzer", "yes")), "enable_analyzer should be true or false"},
		"bad tokenizer":   {with(textField("t", "enable_analyzer", "true", "analyzer_params", `{"tokenizer":"nope"}`)), "unsupported tokenizer: nope"},
		"not json":        {with(textField("t", "enable_analyzer", "true", "analyzer_params", `{`)), "analyzer params must be a json object"},
		"both params":     {with(textField("lang"), textField("t", "enable_analyzer", "true", "analyzer_params", `{}`, "multi_analyzer_params", `{"by_field":"lang","analyzers":{"default":{}}}`)), "cannot be set together"},
		"no by_field":     {with(textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"analyzers":{"default":{}}}`)), "by_field"},
		"missing field":   {with(textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"by_field":"lang","analyzers":{"default":{}}}`)), "by_field lang not found"},
		"by_field is int": {with(&schemapb.FieldSchema{Name: "lang", DataType: schemapb.DataType_Int64}, textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"by_field":"lang","analyzers":{"default":{}}}`)), "must be a VarChar field"},
		"no default":      {with(textField("lang"), textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"by_field":"lang","analyzers":{"en":{}}}`)), "default analyzer"},
		"bad analyzer":    {with(textField("lang"), textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"by_field":"lang","analyzers":{"default":{"tokenizer":1}}}`)), "create analyzer default failed"},
		"bad alias":       {with(textField("lang"), textField("t", "enable_analyzer", "true", "multi_analyzer_params", `{"by_field":"lang","analyzers":{"default":{}},"alias":{"en":"english"}}`)), "alias en"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := PrepareSchema(tc.s)
			require.Error(t, err)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}
