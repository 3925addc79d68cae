package analyzer

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// The type params of a VarChar field that configure its analyzer.
const (
	// ParamEnableAnalyzer turns the analyzer of a VarChar field on ("true").
	ParamEnableAnalyzer = "enable_analyzer"
	// ParamAnalyzerParams is the analyzer's params (JSON, see New).
	ParamAnalyzerParams = "analyzer_params"
	// ParamMultiAnalyzerParams is the per-language analyzers' params (JSON:
	// by_field, analyzers, alias).
	ParamMultiAnalyzerParams = "multi_analyzer_params"
)

// DefaultAnalyzerName is the analyzer of multi_analyzer_params that
// analyzes a row whose language names no other.
const DefaultAnalyzerName = "default"

// Field is the analyzer of a VarChar field: one analyzer, or one per
// language when the field has multi_analyzer_params.
type Field struct {
	single    Analyzer
	byField   string
	analyzers map[string]Analyzer
	alias     map[string]string
}

// ForField builds the analyzer of field f of schema s from its type params
// (analyzer_params, multi_analyzer_params). f need not have enable_analyzer
// set; the caller checks that. For multi_analyzer_params, by_field must name
// another VarChar field of s.
func ForField(s *schemapb.CollectionSchema, f *schemapb.FieldSchema) (*Field, error) {
	var params, multi string
	var hasParams, hasMulti bool
	for _, kv := range f.GetTypeParams() {
		switch kv.GetKey() {
		case ParamAnalyzerParams:
			params, hasParams = kv.GetValue(), true
		case ParamMultiAnalyzerParams:
			multi, hasMulti = kv.GetValue(), true
		}
	}
	if hasMulti {
		if hasParams {
			return nil, errcode.Invalid("field %s: analyzer_params and multi_analyzer_params cannot be set together", f.GetName())
		}
		return newMulti(s, f, multi)
	}
	a, err := New(params)
	if err != nil {
		return nil, errcode.Invalid("field %s: invalid analyzer_params: %s", f.GetName(), err.Error())
	}
	return &Field{single: a}, nil
}

// newMulti builds a per-language Field from multi_analyzer_params.
func newMulti(s *schemapb.CollectionSchema, f *schemapb.FieldSchema, params string) (*Field, error) {
	name := f.GetName()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &m); err != nil {
		return nil, errcode.Invalid("field %s: multi_analyzer_params must be a json object: %v", name, err)
	}
	raw, ok := m["by_field"]
	if !ok {
		return nil, errcode.Invalid("field %s: multi analyzer must have by_field param in multi_analyzer_params", name)
	}
	var by string
	if err := json.Unmarshal(raw, &by); err != nil {
		return nil, errcode.Invalid("field %s: multi analyzer by_field must be string but now: %s", name, raw)
	}
	var byField *schemapb.FieldSchema
	for _, g := range s.GetFields() {
		if g.GetName() == by {
			byField = g
		}
	}
	switch {
	case byField == nil:
		return nil, errcode.Invalid("field %s: multi analyzer by_field %s not found in the collection schema", name, by)
	case by == name:
		return nil, errcode.Invalid("field %s: multi analyzer by_field cannot be the analyzed field itself", name)
	case byField.GetDataType() != schemapb.DataType_VarChar:
		return nil, errcode.Invalid("field %s: multi analyzer by_field %s must be a VarChar field", name, by)
	}
	out := &Field{byField: by, analyzers: map[string]Analyzer{}}
	if raw, ok := m["alias"]; ok {
		if err := json.Unmarshal(raw, &out.alias); err != nil {
			return nil, errcode.Invalid("field %s: multi analyzer mapping must be string map but now: %s", name, raw)
		}
	}
	raw, ok = m["analyzers"]
	if !ok {
		return nil, errcode.Invalid("field %s: multi analyzer must have analyzers param in multi_analyzer_params", name)
	}
	var ap map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ap); err != nil {
		return nil, errcode.Invalid("field %s: multi_analyzer_params analyzers must be a json object: %v", name, err)
	}
	names := make([]string, 0, len(ap))
	for n := range ap {
		names = append(names, n)
	}
	slices.Sort(names) // the first bad analyzer reported is always the same
	for _, n := range names {
		a, err := New(string(ap[n]))
		if err != nil {
			return nil, errcode.Invalid("field %s: create analyzer %s failed: %s", name, n, err.Error())
		}
		out.analyzers[n] = a
	}
	if _, ok := out.analyzers[DefaultAnalyzerName]; !ok {
		return nil, errcode.Invalid("field %s: multi analyzer must have a default analyzer in multi_analyzer_params analyzers", name)
	}
	for k, v := range out.alias {
		if _, ok := out.analyzers[v]; !ok {
			return nil, errcode.Invalid("field %s: multi analyzer alias %s names analyzer %s, which is not configured", name, k, v)
		}
	}
	return out, nil
}

// ByField names the field whose value chooses a row's analyzer, or "" when
// the field has a single analyzer.
func (f *Field) ByField() string { return f.byField }

// Analyze returns the tokens of text, analyzed by the analyzer of language
// lang (ignored when ByField is ""): lang's alias first, then lang itself,
// else the "default" analyzer.
func (f *Field) Analyze(text, lang string) []Token {
	return f.Analyzer(lang).Analyze(text)
}

// Analyzer returns the analyzer a row of language lang uses.
func (f *Field) Analyzer(lang string) Analyzer {
	if f.byField == "" {
		return f.single
	}
	return f.analyzers[f.Resolve(lang)]
}

// Resolve returns the name of the analyzer a row of language lang uses
// (for a single-analyzer field, "").
func (f *Field) Resolve(lang string) string {
	if f.byField == "" {
		return ""
	}
	if a, ok := f.alias[lang]; ok {
		lang = a
	}
	if _, ok := f.analyzers[lang]; ok {
		return lang
	}
	return DefaultAnalyzerName
}

// HasAnalyzer reports whether the field's multi_analyzer_params configure
// the analyzer name (after alias).
func (f *Field) HasAnalyzer(name string) bool {
	if a, ok := f.alias[name]; ok {
		name = a
	}
	_, ok := f.analyzers[name]
	return ok
}

// Enabled reports whether f has enable_analyzer set to true. A value that
// is not a boolean is an error naming the field.
func Enabled(f *schemapb.FieldSchema) (bool, error) {
	for _, kv := range f.GetTypeParams() {
		if kv.GetKey() != ParamEnableAnalyzer {
			continue
		}
		b, err := strconv.ParseBool(kv.GetValue())
		if err != nil {
			return false, errcode.Invalid("field %s: enable_analyzer should be true or false, got %q", f.GetName(), kv.GetValue())
		}
		return b, nil
	}
	return false, nil
}
