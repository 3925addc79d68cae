package rootcoord

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/analyzer"
	"github.com/strata-db/strata/internal/errcode"
)

// checkAnalyzers validates the analyzer type params of the fields of s (the
// prepared schema): enable_analyzer only on VarChar fields, and for those
// fields analyzer_params or multi_analyzer_params that build an analyzer
// (see analyzer.ForField). Params on a field without enable_analyzer are
// kept and not used, as in Milvus.
func checkAnalyzers(s *schemapb.CollectionSchema) error {
	for _, f := range s.GetFields() {
		if err := checkFieldAnalyzer(s, f); err != nil {
			return err
		}
	}
	return nil
}

// checkFieldAnalyzer validates the analyzer type params of field f of s.
func checkFieldAnalyzer(s *schemapb.CollectionSchema, f *schemapb.FieldSchema) error {
	on, err := analyzer.Enabled(f)
	if err != nil || !on {
		return err
	}
	if f.GetDataType() != schemapb.DataType_VarChar {
		return errcode.Invalid("field %s: enable_analyzer is only supported on a VarChar field, not %s", f.GetName(), f.GetDataType())
	}
	_, err = analyzer.ForField(s, f)
	return err
}
