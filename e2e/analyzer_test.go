package e2e

import (
	"hash/crc32"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// tokenTexts returns the texts of an analyzer result's tokens.
func tokenTexts(r *entity.AnalyzerResult) []string {
	out := []string{}
	for _, tk := range r.Tokens {
		out = append(out, tk.Text)
	}
	return out
}

// analyzerSchema is a collection with an analyzed text field (and, for
// multi-language analyzers, its language field) and a vector.
func analyzerSchema(name string, text *entity.Field, extra ...*entity.Field) *entity.Schema {
	s := entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(text).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	for _, f := range extra {
		s.WithField(f)
	}
	return s
}

func TestRunAnalyzer(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)

	t.Run("analyzer params, with detail and hash", func(t *testing.T) {
		params := map[string]any{"tokenizer": "standard", "filter": []any{"lowercase", map[string]any{"type": "stop", "stop_words": []string{"test"}}}}
		res, err := c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("Test Milvus", "").WithAnalyzerParams(params).WithDetail().WithHash())
		require.NoError(t, err)
		require.Len(t, res, 2)
		require.Equal(t, []*entity.Token{{
			Text: "milvus", StartOffset: 5, EndOffset: 11, Position: 1, PositionLength: 1,
			Hash: crc32.ChecksumIEEE([]byte("milvus")),
		}}, res[0].Tokens)
		require.Empty(t, res[1].Tokens)
	})

	t.Run("built-in analyzers", func(t *testing.T) {
		res, err := c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("The Milvus vector database is built for scale!").WithAnalyzerParams(map[string]any{"type": "english"}))
		require.NoError(t, err)
		require.Equal(t, []string{"milvus", "vector", "databas", "built", "scale"}, tokenTexts(res[0]))
		res, err = c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("milvus结巴分词器中文测试").WithAnalyzerParams(map[string]any{"type": "chinese"}).WithDetail())
		require.NoError(t, err)
		require.Equal(t, []string{"milvus", "结巴", "分词", "分词器", "中文", "测试"}, tokenTexts(res[0]))
		require.Equal(t, int64(8), res[0].Tokens[2].Position) // jieba positions are rune offsets
		require.Equal(t, int64(2), res[0].Tokens[2].PositionLength)
	})

	t.Run("bad params are refused with 1100", func(t *testing.T) {
		for _, p := range []map[string]any{
			{"tokenizer": "invalid_tokenizer"},
			{"tokenizer": map[string]any{"type": "jieba", "mode": "invalid_mode"}},
			{"tokenizer": "standard", "filter": []any{map[string]any{"type": "stop"}}},
			{"filter": []any{"lowercase"}},
		} {
			_, err := c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("text").WithAnalyzerParams(p))
			require.Error(t, err, "%v", p)
			require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "%v: %v", p, err)
		}
	})

	t.Run("a collection field's analyzer", func(t *testing.T) {
		text := entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256).
			WithEnableAnalyzer(true).WithAnalyzerParams(map[string]any{"type": "english"})
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("an_single", analyzerSchema("an_single", text))))
		res, err := c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("running databases").WithField("an_single", "text"))
		require.NoError(t, err)
		require.Equal(t, []string{"run", "databas"}, tokenTexts(res[0]))
		_, err = c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("x").WithField("an_single", "vec"))
		require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "%v", err)
	})

	t.Run("a multi-language field", func(t *testing.T) {
		text := entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256).
			WithEnableAnalyzer(true).WithMultiAnalyzerParams(map[string]any{
			"by_field": "lang",
			"analyzers": map[string]any{
				"en":      map[string]any{"type": "english"},
				"zh":      map[string]any{"type": "chinese"},
				"default": map[string]any{"tokenizer": "whitespace"},
			},
			"alias": map[string]any{"english": "en"},
		})
		lang := entity.NewField().WithName("lang").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16)
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("an_multi", analyzerSchema("an_multi", text, lang))))
		res, err := c.RunAnalyzer(ctx, milvusclient.NewRunAnalyzerOption("Running fast", "中文测试", "Running fast").
			WithField("an_multi", "text").WithAnalyzerName("english", "zh", "fr"))
		require.NoError(t, err)
		require.Equal(t, []string{"run", "fast"}, tokenTexts(res[0]))
		require.Equal(t, []string{"中文", "测试"}, tokenTexts(res[1]))
		require.Equal(t, []string{"Running", "fast"}, tokenTexts(res[2])) // no "fr" analyzer: the default
	})

	t.Run("bad analyzer schemas create nothing", func(t *testing.T) {
		for name, f := range map[string]*entity.Field{
			"an_bad_type": entity.NewField().WithName("text").WithDataType(entity.FieldTypeInt64).WithEnableAnalyzer(true),
			"an_bad_tok": entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64).
				WithEnableAnalyzer(true).WithAnalyzerParams(map[string]any{"tokenizer": "nope"}),
			"an_bad_multi": entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64).
				WithEnableAnalyzer(true).WithMultiAnalyzerParams(map[string]any{"by_field": "missing", "analyzers": map[string]any{"default": map[string]any{}}}),
		} {
			err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, analyzerSchema(name, f)))
			require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "%s: %v", name, err)
			has, err := c.HasCollection(ctx, milvusclient.NewHasCollectionOption(name))
			require.NoError(t, err)
			require.False(t, has, name)
		}
	})
}
