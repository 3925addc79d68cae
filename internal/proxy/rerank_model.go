package proxy

// Model rerankers: Milvus 2.6's function-score reranker "model", which asks a
// self-hosted rerank service for the relevance of each hit's text to the
// query text, and orders the hits by it. Strata speaks the two self-hosted
// protocols Milvus does: Hugging Face Text Embeddings Inference (provider
// "tei": POST {endpoint}/rerank {"query", "texts"} → [{"index", "score"}])
// and vLLM (provider "vllm": POST {endpoint}/rerank {"query", "documents"} →
// {"results": [{"index", "relevance_score"}]}). The cloud providers Milvus
// also lists (cohere, voyageai, siliconflow, ali, zilliz) need credentials
// and services this server is not configured for; they are refused.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// modelRanker is a model reranker: query q's hits are scored by the
// provider's relevance of their input-field text to queries[q].
type modelRanker struct {
	field    *schemapb.FieldSchema
	queries  []string
	provider rerankProvider
}

// rerankProvider asks a rerank service for the relevance of each document
// to a query.
type rerankProvider interface {
	rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// codeFunctionFailed is the code Milvus reports for model reranker errors
// (65535, no merr code of its own).
const codeFunctionFailed = codeUnknown

// parseModelRanker validates a model reranker's input field and params
// (lower-cased keys) with Milvus's checks and messages.
func parseModelRanker(col *catalog.Collection, f *schemapb.FunctionSchema, params map[string]string) (*modelRanker, error) {
	fail := func(format string, args ...any) error { return errcode.New(codeFunctionFailed, format, args...) }
	names := f.GetInputFieldNames()
	if len(names) != 1 {
		return nil, fail("rerank model only supports single input, but gets [%v] input", names)
	}
	field := col.Field(names[0])
	if field == nil || field.GetIsDynamic() {
		return nil, errcode.New(1, "field not found: %s", names[0])
	}
	if field.GetDataType() != schemapb.DataType_VarChar {
		return nil, fail("rerank model only support varchar, the input is %s", field.GetDataType())
	}
	raw, found := params["queries"]
	if !found {
		return nil, fail("rerank function lost params queries")
	}
	var queries []string
	if err := json.Unmarshal([]byte(raw), &queries); err != nil {
		return nil, fail("parse rerank params [queries] failed, err: %v", err)
	}
	if len(queries) == 0 {
		return nil, fail("parse rerank params [queries] failed, err: queries is empty")
	}
	name, found := params["provider"]
	if !found {
		return nil, fail("lost rerank params:provider ")
	}
	var p rerankProvider
	var err error
	switch strings.ToLower(name) {
	case "tei":
		p, err = newHTTPReranker(params, "tei", 32)
	case "vllm":
		p, err = newHTTPReranker(params, "vllm", 128)
	case "cohere", "voyageai", "siliconflow", "ali", "zilliz":
		return nil, fail("rerank provider: [%s] is disabled: it calls a cloud service with credentials, which this server is not configured for", name)
	default:
		return nil, fail("unknown rerank model provider:%s", name)
	}
	if err != nil {
		return nil, err
	}
	return &modelRanker{field: field, queries: queries, provider: p}, nil
}

func (m *modelRanker) input() *schemapb.FieldSchema { return m.field }

func (m *modelRanker) check(nq int) error {
	if nq != len(m.queries) {
		return errcode.New(codeFunctionFailed, "nq must equal to queries size, but got nq [%d], queries size [%d], queries: [%v]",
			nq, len(m.queries), m.queries)
	}
	return nil
}

func (m *modelRanker) rescore(ctx context.Context, q int, _ []float64, values column.Column, rows []int) ([]float64, error) {
	texts, ok := values.(*column.Strings)
	if !ok {
		return nil, fmt.Errorf("proxy: model rerank: field %s has no text column", m.field.GetName())
	}
	docs := make([]string, len(rows))
	for i, r := range rows {
		if !texts.IsNull(r) {
			docs[i] = texts.Data[r]
		}
	}
	if len(docs) == 0 {
		return nil, nil
	}
	return m.provider.rerank(ctx, m.queries[q], docs)
}

// httpReranker is a TEI or vLLM rerank service.
type httpReranker struct {
	kind     string // "tei" or "vllm"
	url      string
	maxBatch int
	extra    map[string]any // truncate options passed through
	timeout  time.Duration
	client   *http.Client
}

// newHTTPReranker validates a self-hosted provider's params: endpoint (an
// http or https URL), max_client_batch_size, the truncation options and
// timeout (ms).
func newHTTPReranker(params map[string]string, kind string, maxBatch int) (*httpReranker, error) {
	fail := func(format string, args ...any) error { return errcode.New(codeFunctionFailed, format, args...) }
	endpoint := params["endpoint"]
	base, err := url.Parse(endpoint)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fail("endpoint: [%s] is not a valid http/https link", endpoint)
	}
	base.Path = strings.TrimSuffix(base.Path, "/") + "/rerank"
	h := &httpReranker{
		kind: kind, url: base.String(), maxBatch: maxBatch, extra: map[string]any{},
		timeout: 30 * time.Second, client: &http.Client{},
	}
	if v, ok := params["max_client_batch_size"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fail("[max_client_batch_size param's value: %s] is not a valid number", v)
		}
		if n <= 0 {
			return nil, fail("[max_client_batch_size param's value: %s] must be greater than 0", v)
		}
		h.maxBatch = n
	}
	if v, ok := params["timeout"]; ok {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			h.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	switch kind {
	case "tei":
		if v, ok := params["truncate"]; ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fail("Rerank params error, truncate: %s is not bool type", v)
			}
			h.extra["truncate"] = b
		}
		if v, ok := params["truncation_direction"]; ok {
			if v != "Left" && v != "Right" {
				return nil, fail("[truncation_direction param's value: %s] is not invalid, only supports [Left/Right]", v)
			}
			h.extra["truncation_direction"] = v
		}
	case "vllm":
		if v, ok := params["truncate_prompt_tokens"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fail("Rerank params error, truncate_prompt_tokens: %s is not a number", v)
			}
			h.extra["truncate_prompt_tokens"] = n
		}
	}
	return h, nil
}

// rerank asks the service in batches of maxBatch documents.
func (h *httpReranker) rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	for start := 0; start < len(docs); start += h.maxBatch {
		end := min(start+h.maxBatch, len(docs))
		scores, err := h.call(ctx, query, docs[start:end])
		if err != nil {
			return nil, err
		}
		copy(out[start:end], scores)
	}
	return out, nil
}

// call sends one request, retrying transport errors and 429/5xx answers
// up to three times with a short backoff, as Milvus does.
func (h *httpReranker) call(ctx context.Context, query string, docs []string) ([]float64, error) {
	req := map[string]any{"query": query}
	if h.kind == "tei" {
		req["texts"] = docs
	} else {
		req["documents"] = docs
	}
	for k, v := range h.extra {
		req[k] = v
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var last error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, errcode.New(codeFunctionFailed, "call service failed: %v", ctx.Err())
			case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
			}
		}
		var retry bool
		var resp []byte
		resp, retry, last = h.post(ctx, body)
		if last == nil {
			return h.decode(resp, len(docs))
		}
		if !retry {
			break
		}
	}
	return nil, last
}

// post sends body and returns the answer, or an error and whether it is
// worth retrying.
func (h *httpReranker) post(ctx context.Context, body []byte) ([]byte, bool, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, errcode.New(codeFunctionFailed, "call service failed: %v", err)
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(r)
	if err != nil {
		return nil, true, errcode.New(codeFunctionFailed, "call service failed: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, true, errcode.New(codeFunctionFailed, "call service failed, read response failed: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, errcode.New(codeFunctionFailed, "call service failed, errs:[%s, %s]", resp.Status, data)
	}
	return data, false, nil
}

// decode reads a TEI or vLLM answer into one score per document.
func (h *httpReranker) decode(data []byte, n int) ([]float64, error) {
	type item struct {
		Index          int      `json:"index"`
		Score          *float64 `json:"score"`
		RelevanceScore *float64 `json:"relevance_score"`
	}
	var items []item
	if h.kind == "tei" {
		if err := json.Unmarshal(data, &items); err != nil {
			return nil, errcode.New(codeFunctionFailed, "call service failed, unmarshal response failed: %v", err)
		}
	} else {
		var v struct {
			Results []item `json:"results"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, errcode.New(codeFunctionFailed, "call service failed, unmarshal response failed: %v", err)
		}
		items = v.Results
	}
	out := make([]float64, n)
	got := make([]bool, n)
	for _, it := range items {
		s := it.Score
		if s == nil {
			s = it.RelevanceScore
		}
		if it.Index < 0 || it.Index >= n || s == nil || got[it.Index] {
			return nil, errcode.New(codeFunctionFailed, "call service failed: the rerank answer has a bad or repeated index %d", it.Index)
		}
		out[it.Index], got[it.Index] = *s, true
	}
	for i, ok := range got {
		if !ok {
			return nil, errcode.New(codeFunctionFailed, "call service failed: the rerank answer has no score for document %d of %d", i, n)
		}
	}
	return out, nil
}
