package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// Codes of a refused index search parameter (ef, nprobe, refine_k,
// rbq_bits_query). Milvus has its index library (knowhere) check them
// against the index's typed configuration, and the error carries no merr
// code of its own; Milvus's client suite expects 65535 on the quantized HNSW
// indexes (test_hnsw_sq.py) and 999 elsewhere (test_hnsw.py,
// test_ivf_rabitq.py, test_diskann.py), and Strata answers the same.
const (
	codeSearchParam      int32 = 999
	codeSearchParamQuant int32 = codePlainError
)

// searchParamCode is the code of a refused search parameter on an index of
// type indexType (see codeSearchParam).
func searchParamCode(indexType string) int32 {
	if strings.HasPrefix(strings.ToUpper(indexType), "HNSW_") {
		return codeSearchParamQuant
	}
	return codeSearchParam
}

// decodeSearchParams decodes the "params" JSON object of a search, keeping
// each number's text (json.Number), so that a refusal can print the value
// as the client wrote it (32.0 stays 32.0, as Milvus prints it).
func decodeSearchParams(raw string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, errcode.Invalid("search params %q are not a JSON object", raw)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errcode.Invalid("search params %q are not a JSON object", raw)
	}
	return m, nil
}

// jsonText prints a decoded JSON value as Milvus's messages do: a number
// as written, anything else as compact JSON (true, null, [32]).
func jsonText(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// intSearchParam reads the integer search parameter key, which must lie
// in [lo, hi], with Milvus's wording of each refusal: a JSON integer, or a
// string holding one (Milvus does not check a string's type); a fraction
// (32.0), boolean, null, list or object is a type conflict. code is the
// refusal's code (searchParamCode).
func intSearchParam(code int32, key string, v any, lo, hi int64) (int64, error) {
	var n int64
	switch v := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(v.String(), 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, errcode.New(code, "Out of range in json: param '%s' (%s) should be in range [%d, %d]", key, v, lo, hi)
		}
		if err != nil {
			return 0, errcode.New(code, "Type conflict in json: param '%s' (%s) should be integer", key, v)
		}
		n = i
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, errcode.New(code, "invalid integer value, key: '%s', value: '%s'", key, v)
		}
		n = i
	default:
		return 0, errcode.New(code, "Type conflict in json: param '%s' (%s) should be integer", key, jsonText(v))
	}
	if n < lo || n > hi {
		return 0, errcode.New(code, "Out of range in json: param '%s' (%d) should be in range [%d, %d]", key, n, lo, hi)
	}
	return n, nil
}

// parseRefineK reads the refine_k search parameter of a quantized index
// with a refine store (HNSW_SQ, HNSW_PQ, IVF_RABITQ): a number, or a
// string holding one, in [1, the largest float32], refused with Milvus's
// (knowhere's) wording.
func parseRefineK(code int32, v any) (float64, error) {
	var f float64
	text := ""
	switch v := v.(type) {
	case json.Number:
		x, err := v.Float64()
		if err != nil {
			return 0, errcode.New(code, "Type conflict in json: param 'refine_k' (%s) should be a number", v)
		}
		f, text = x, v.String()
	case string:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, errcode.New(code, "invalid float value, key: 'refine_k', value: '%s'", v)
		}
		f, text = x, strings.TrimSpace(v)
	default:
		return 0, errcode.New(code, "Type conflict in json: param 'refine_k' (%s) should be a number", jsonText(v))
	}
	if !(f >= 1 && f <= math.MaxFloat32) {
		return 0, errcode.New(code, "Out of range in json: param 'refine_k' (%s) should be in range [%f, %f]",
			text, 1.0, math.MaxFloat32)
	}
	return f, nil
}

// toNumber is toFloat for a value of decodeSearchParams: a JSON number or a
// string holding one.
func toNumber(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	return toFloat(v)
}

// parseIndexSearchParams reads the index search parameters of the
// "params" JSON object (decodeSearchParams) into sreq: ef (at least k, the
// hits asked for), DISKANN's search_list (the same, carried as ef), nprobe, refine_k, rbq_bits_query, the sparse index's,
// and a range search's radius and range_filter (not on embedding lists).
// Every index-specific search parameter is read here, whatever the index
// type of field; indexType only picks the code of a refusal
// (searchParamCode).
func parseIndexSearchParams(m map[string]any, field *schemapb.FieldSchema, indexType string, k int, sreq *plan.Search) error {
	code := searchParamCode(indexType)
	if v, found := m["ef"]; found {
		n, err := intSearchParam(code, "ef", v, 1, math.MaxInt32)
		if err != nil {
			return err
		}
		if int(n) < k {
			return errcode.New(code, "ef(%d) should be larger than k(%d)", n, k)
		}
		sreq.Ef = int(n)
	}
	if v, found := m["search_list"]; found && strings.EqualFold(indexType, "DISKANN") {
		n, err := intSearchParam(code, "search_list", v, 1, math.MaxInt32)
		if err != nil {
			return err
		}
		if int(n) < k {
			return errcode.New(code, "search_list(%d) should be larger than k(%d)", n, k)
		}
		sreq.Ef = int(n)
	}
	if v, found := m["nprobe"]; found {
		n, err := intSearchParam(code, "nprobe", v, 1, 65536)
		if err != nil {
			return err
		}
		sreq.Nprobe = int(n)
	}
	if v, found := m["refine_k"]; found {
		f, err := parseRefineK(code, v)
		if err != nil {
			return err
		}
		sreq.RefineK = f
	}
	if v, found := m["rbq_bits_query"]; found {
		n, err := intSearchParam(code, "rbq_bits_query", v, 0, 8)
		if err != nil {
			return err
		}
		sreq.RbqBitsQuery = int(n)
	}
	if err := parseSparseSearchParams(m, sreq); err != nil {
		return err
	}
	if v, found := m["radius"]; found {
		f, ok := toNumber(v)
		if !ok {
			return errcode.Invalid("radius %v is not a number", v)
		}
		sreq.Radius, sreq.HasRadius = f, true
	}
	if v, found := m["range_filter"]; found {
		f, ok := toNumber(v)
		if !ok {
			return errcode.Invalid("range_filter %v is not a number", v)
		}
		sreq.RangeFilter, sreq.HasRange = f, true
	}
	if field.GetDataType() == schemapb.DataType_ArrayOfVector && (sreq.HasRadius || sreq.HasRange) {
		return errcode.New(codePlainError, "range search is not supported for vector array (embedding list) fields")
	}
	return nil
}
