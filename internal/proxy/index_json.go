package proxy

import (
	"errors"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// codePlainError is the code of a Milvus error that carries no merr code
// (an index conflict, an unknown field or an unparsable json_path).
const codePlainError int32 = 65535

// invalidIndexParams words a refused index definition as Milvus's
// CreateIndex does (merr.WrapErrParameterInvalid around the checker's reason).
func invalidIndexParams(reason string) error {
	return errcode.Invalid("%s: invalid parameter[expected=valid index params][actual=invalid index params]", reason)
}

// indexedField resolves the field a CreateIndex names: a schema field
// (the dynamic field `$meta` too), or, in a collection with the dynamic
// field enabled, a key of `$meta`, which is then the field indexed (by
// json_path). It returns nil for any other name.
func indexedField(col *catalog.Collection, name string) *schemapb.FieldSchema {
	if f := col.Field(name); f != nil {
		if f.GetFieldID() < 100 {
			return nil
		}
		return f
	}
	for _, f := range col.Schema.GetFields() {
		if f.GetIsDynamic() {
			return f
		}
	}
	return nil
}

// checkJSONIndex validates a JSON-path index on f, the JSON field or the
// dynamic field, requested under the name field, as Milvus 2.6 does: the
// type is INVERTED (or AUTOINDEX, built as INVERTED); json_cast_type is
// required and case-insensitive (BOOL, DOUBLE, VARCHAR, ARRAY_BOOL,
// ARRAY_DOUBLE, ARRAY_VARCHAR or JSON); json_path defaults to the field
// name and must start with it. It fills a defaulted json_path into params
// and returns the index type to record and the default index name, the
// field name followed by the path as a JSON pointer (`my_json/a/b`,
// `$meta/key/a`).
func checkJSONIndex(f *schemapb.FieldSchema, field, it string, params map[string]string) (string, string, error) {
	switch it {
	case "", "AUTOINDEX", "INVERTED":
	case "STL_SORT":
		return "", "", invalidIndexParams("STL_SORT are only supported on numeric, varchar or timestamptz field, got JSON")
	case "Trie", "TRIE":
		return "", "", invalidIndexParams("TRIE are only supported on varchar field")
	case "BITMAP":
		return "", "", invalidIndexParams("bitmap index are only supported on bool, int, string and array field")
	default:
		_, err := checkScalarIndex(f, it, params)
		if err == nil {
			err = errcode.Invalid("invalid parameter[expected=valid index][actual=invalid index type: %s]", it)
		}
		return "", "", err
	}
	if _, set := params[catalog.JSONPathKey]; !set {
		params[catalog.JSONPathKey] = field
	}
	rec, err := checkScalarIndex(f, it, params)
	if err != nil {
		if ce := (*errcode.Error)(nil); errors.As(err, &ce) && ce.Code == errcode.IllegalArgument {
			return "", "", invalidIndexParams(ce.Msg)
		}
		return "", "", err
	}
	path := params[catalog.JSONPathKey]
	p, err := catalog.ParseJSONPath(path)
	if err != nil {
		return "", "", errcode.New(codePlainError, "cannot parse identifier: %s", path)
	}
	dynamic := f.GetIsDynamic()
	if p.Root != field && !(dynamic && (p.Root == catalog.DynamicFieldName || field == catalog.DynamicFieldName)) {
		return "", "", errcode.Invalid("json_path %s of the index does not start with the field name %s", path, field)
	}
	if dynamic && p.Root == catalog.DynamicFieldName && len(p.Keys) == 0 {
		return "", "", errcode.Invalid("json_path %s of the index names no key of the dynamic field", path)
	}
	return rec, f.GetName() + catalog.Pointer(p.Steps(dynamic)), nil
}

// indexFieldName is the field name DescribeIndex reports for idx on f: the
// schema name, or for a JSON-path index on the dynamic field the key its
// json_path starts with (the name it was created under).
func indexFieldName(f *schemapb.FieldSchema, idx catalog.IndexInfo) string {
	if !f.GetIsDynamic() {
		return f.GetName()
	}
	if p, err := catalog.ParseJSONPath(idx.Params[catalog.JSONPathKey]); err == nil {
		return p.Root
	}
	return f.GetName()
}
