package rootcoord

import (
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/errcode"
)

// StartOfFunctionID is the ID of a collection's first function, as in
// Milvus (functions are numbered in schema order from it).
const StartOfFunctionID = 100

// prepareFunctions validates the functions of a schema whose fields have
// their IDs (out.Fields) and stores them with their IDs and input and
// output field IDs resolved; every output field is marked
// is_function_output. Milvus 2.6's checks and messages; BM25 is the only
// function type a collection can hold here (text-embedding functions call
// an external model service, which Strata does not reach).
func prepareFunctions(out *schemapb.CollectionSchema) error {
	byName := map[string]*schemapb.FieldSchema{}
	for _, f := range out.GetFields() {
		byName[f.GetName()] = f
	}
	usedOutput := map[string]bool{}
	usedName := map[string]bool{}
	fns := make([]*schemapb.FunctionSchema, 0, len(out.GetFunctions()))
	for i, in := range out.GetFunctions() {
		fn := proto.Clone(in).(*schemapb.FunctionSchema)
		if fn.GetName() == "" {
			return errcode.New(errcode.ParameterMissing, "function name cannot be empty")
		}
		if len(fn.GetInputFieldNames()) == 0 {
			return errcode.New(errcode.ParameterMissing, "function input field names cannot be empty, function: %s", fn.GetName())
		}
		if len(fn.GetOutputFieldNames()) == 0 {
			return errcode.New(errcode.ParameterMissing, "function output field names cannot be empty, function: %s", fn.GetName())
		}
		if usedName[fn.GetName()] {
			return errcode.Invalid("duplicate function name: %s", fn.GetName())
		}
		usedName[fn.GetName()] = true
		if fn.GetType() != schemapb.FunctionType_BM25 {
			return errcode.Invalid("function %s: function type %s is not supported: only BM25 functions run inside the server", fn.GetName(), fn.GetType())
		}
		var inputs []*schemapb.FieldSchema
		for _, name := range fn.GetInputFieldNames() {
			f, ok := byName[name]
			if !ok {
				return errcode.Invalid("function input field not found: %s", name)
			}
			inputs = append(inputs, f)
		}
		if len(inputs) != 1 || inputs[0].GetDataType() != schemapb.DataType_VarChar {
			return errcode.Invalid("BM25 function input field must be a VARCHAR/TEXT field, got %d field with type %s",
				len(inputs), inputs[0].GetDataType())
		}
		if !enableAnalyzerSet(inputs[0]) {
			return errcode.Invalid("BM25 function input field must set enable_analyzer to true")
		}
		var outputs []*schemapb.FieldSchema
		for _, name := range fn.GetOutputFieldNames() {
			f, ok := byName[name]
			if !ok {
				return errcode.Invalid("function output field not found: %s", name)
			}
			switch {
			case f.GetIsPrimaryKey():
				return errcode.Invalid("function output field cannot be primary key: function %s, field %s", fn.GetName(), name)
			case f.GetIsPartitionKey() || f.GetIsClusteringKey():
				return errcode.Invalid("function output field cannot be partition key or clustering key: function %s, field %s", fn.GetName(), name)
			case f.GetNullable():
				return errcode.Invalid("function output field cannot be nullable: function %s, field %s", fn.GetName(), name)
			case usedOutput[name]:
				return errcode.Invalid("duplicate function output field: function %s, field %s", fn.GetName(), name)
			}
			usedOutput[name] = true
			outputs = append(outputs, f)
		}
		if len(outputs) != 1 {
			return errcode.Invalid("BM25 function only need 1 output field, but got %d", len(outputs))
		}
		if outputs[0].GetDataType() != schemapb.DataType_SparseFloatVector {
			return errcode.Invalid("BM25 function output field must be a SparseFloatVector field, but got %s", outputs[0].GetDataType())
		}
		fn.Id = int64(StartOfFunctionID + i)
		fn.InputFieldIds = []int64{inputs[0].GetFieldID()}
		fn.OutputFieldIds = []int64{outputs[0].GetFieldID()}
		outputs[0].IsFunctionOutput = true
		fns = append(fns, fn)
	}
	out.Functions = fns
	return nil
}

// enableAnalyzerSet reports whether a field has enable_analyzer set.
func enableAnalyzerSet(f *schemapb.FieldSchema) bool {
	v, ok := typeParam(f, "enable_analyzer")
	return ok && strings.EqualFold(strings.TrimSpace(v), "true")
}
