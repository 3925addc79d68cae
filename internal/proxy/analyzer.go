package proxy

import (
	"context"
	"unicode/utf8"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/errcode"
)

// RunAnalyzer shows the tokens an analyzer makes of each text: the analyzer
// of analyzer_params, or that of a collection's field (collection_name,
// field_name; analyzer_names choose among a multi-language field's
// analyzers, one name for all texts or one per text).
func (p *Proxy) RunAnalyzer(ctx context.Context, req *milvuspb.RunAnalyzerRequest) (*milvuspb.RunAnalyzerResponse, error) {
	results, err := p.runAnalyzer(ctx, req)
	if err != nil {
		return &milvuspb.RunAnalyzerResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.RunAnalyzerResponse{Status: ok(), Results: results}, nil
}

func (p *Proxy) runAnalyzer(ctx context.Context, req *milvuspb.RunAnalyzerRequest) ([]*milvuspb.AnalyzerResult, error) {
	texts := make([]string, len(req.GetPlaceholder()))
	for i, b := range req.GetPlaceholder() {
		if !utf8.Valid(b) {
			return nil, errcode.Invalid("analyzer input text %d must be utf8 format", i)
		}
		texts[i] = string(b)
	}
	pick, err := p.analyzersFor(ctx, req, len(texts))
	if err != nil {
		return nil, err
	}
	out := make([]*milvuspb.AnalyzerResult, len(texts))
	for i, text := range texts {
		toks := pick(i).Analyze(text)
		res := &milvuspb.AnalyzerResult{Tokens: make([]*milvuspb.AnalyzerToken, len(toks))}
		for j, t := range toks {
			at := &milvuspb.AnalyzerToken{Token: t.Text}
			if req.GetWithDetail() {
				at.StartOffset, at.EndOffset = int64(t.Start), int64(t.End)
				at.Position, at.PositionLength = int64(t.Position), int64(t.Length)
			}
			if req.GetWithHash() {
				at.Hash = analyzer.Hash(t.Text)
			}
			res.Tokens[j] = at
		}
		out[i] = res
	}
	return out, nil
}

// analyzersFor returns the analyzer of each of n texts of req.
func (p *Proxy) analyzersFor(ctx context.Context, req *milvuspb.RunAnalyzerRequest, n int) (func(i int) analyzer.Analyzer, error) {
	if req.GetCollectionName() == "" {
		a, err := analyzer.New(req.GetAnalyzerParams())
		if err != nil {
			return nil, err
		}
		return func(int) analyzer.Analyzer { return a }, nil
	}
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var field *schemapb.FieldSchema
	for _, f := range col.Schema.GetFields() {
		if f.GetName() == req.GetFieldName() {
			field = f
		}
	}
	if field == nil {
		return nil, errcode.Invalid("field %s not found in collection %s", req.GetFieldName(), req.GetCollectionName())
	}
	if on, _ := analyzer.Enabled(field); !on || field.GetDataType() != schemapb.DataType_VarChar {
		return nil, errcode.Invalid("field %s is not a VarChar field with enable_analyzer", field.GetName())
	}
	fa, err := analyzer.ForField(col.Schema, field)
	if err != nil {
		return nil, err
	}
	names := req.GetAnalyzerNames()
	if fa.ByField() == "" {
		return func(int) analyzer.Analyzer { return fa.Analyzer("") }, nil
	}
	switch len(names) {
	case 0:
		return func(int) analyzer.Analyzer { return fa.Analyzer(analyzer.DefaultAnalyzerName) }, nil
	case 1:
		return func(int) analyzer.Analyzer { return fa.Analyzer(names[0]) }, nil
	case n:
		return func(i int) analyzer.Analyzer { return fa.Analyzer(names[i]) }, nil
	}
	return nil, errcode.Invalid("analyzer names length %d does not match texts length %d (give one name, or one a text)", len(names), n)
}
