package highlight

import (
	"encoding/json"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"

	"github.com/strata-db/strata/internal/errcode"
)

// Defaults of the parameters Milvus applies when a key is absent.
const (
	DefaultPreTag         = "<em>"
	DefaultPostTag        = "</em>"
	DefaultFragmentSize   = 100
	DefaultNumOfFragments = 5
)

// QueryTextMatch is the only highlight query type Milvus 2.6 knows: the
// terms of a TEXT_MATCH filter on a field.
const QueryTextMatch = "TextMatch"

// Config is a parsed LexicalHighlighter.
type Config struct {
	// PreTags and PostTags wrap the matches, cycling per match; never empty.
	PreTags, PostTags []string
	// FragmentOffset is how many characters of context a fragment keeps
	// before its first match.
	FragmentOffset int
	// FragmentSize is the least length of a fragment in characters (> 0).
	FragmentSize int
	// NumOfFragments caps the fragments of one text (0 returns none).
	NumOfFragments int
	// SearchText highlights the BM25 search text of the hit's query.
	SearchText bool
	// Queries are the extra highlight queries, in request order.
	Queries []Query
}

// Query is one highlight query: highlight the analyzed Text in Field.
type Query struct {
	Type, Field, Text string
}

// Defaults returns the configuration of a highlighter without parameters.
func Defaults() Config {
	return Config{
		PreTags:        []string{DefaultPreTag},
		PostTags:       []string{DefaultPostTag},
		FragmentSize:   DefaultFragmentSize,
		NumOfFragments: DefaultNumOfFragments,
	}
}

// Parse reads the params of a lexical commonpb.Highlighter. Unknown keys
// are ignored, as Milvus does.
func Parse(params []*commonpb.KeyValuePair) (*Config, error) {
	c := Defaults()
	kv := map[string]string{}
	for _, p := range params {
		kv[p.GetKey()] = p.GetValue()
	}
	var err error
	if v, ok := kv["pre_tags"]; ok {
		if c.PreTags, err = parseTags("pre_tags", v); err != nil {
			return nil, err
		}
	}
	if v, ok := kv["post_tags"]; ok {
		if c.PostTags, err = parseTags("post_tags", v); err != nil {
			return nil, err
		}
	}
	if v, ok := kv["fragment_size"]; ok {
		if c.FragmentSize, err = parseCount("fragment_size", v, 1); err != nil {
			return nil, err
		}
	}
	if v, ok := kv["num_of_fragments"]; ok {
		if c.NumOfFragments, err = parseCount("num_of_fragments", v, 0); err != nil {
			return nil, err
		}
	}
	if v, ok := kv["fragment_offset"]; ok {
		if c.FragmentOffset, err = parseCount("fragment_offset", v, 0); err != nil {
			return nil, err
		}
	}
	if v, ok := kv["highlight_search_text"]; ok {
		if c.SearchText, err = strconv.ParseBool(v); err != nil {
			return nil, errcode.InvalidParam("unmarshal highlight_search_text as bool failed: %v", err)
		}
	}
	// pymilvus 2.6 sends highlight_query; the first 2.6 servers read queries.
	for _, key := range []string{"highlight_query", "queries"} {
		if v, ok := kv[key]; ok {
			qs, err := parseQueries(v)
			if err != nil {
				return nil, err
			}
			c.Queries = append(c.Queries, qs...)
		}
	}
	return &c, nil
}

func parseTags(key, v string) ([]string, error) {
	var tags []string
	if err := json.Unmarshal([]byte(v), &tags); err != nil {
		return nil, errcode.InvalidParam("unmarshal %s as string list failed: %v", key, err)
	}
	if len(tags) == 0 {
		return nil, errcode.InvalidParam("%s cannot be empty list", key)
	}
	return tags, nil
}

// parseCount reads a decimal integer of at least lowest; the message quotes
// the value as sent (pymilvus sends 0.1 as "0.1").
func parseCount(key, v string, lowest int64) (int, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lowest {
		return 0, errcode.InvalidParam("invalid %s: %s", key, v)
	}
	return int(n), nil
}

func parseQueries(v string) ([]Query, error) {
	var items []any
	if err := json.Unmarshal([]byte(v), &items); err != nil {
		return nil, errcode.InvalidParam("unmarshal highlight queries as json array failed: %v", err)
	}
	out := make([]Query, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errcode.InvalidParam("unmarshal highlight queries failed: item in array is not json object")
		}
		var q Query
		for _, f := range []struct {
			key string
			dst *string
		}{{"text", &q.Text}, {"type", &q.Type}, {"field", &q.Field}} {
			raw, ok := m[f.key]
			if !ok {
				return nil, errcode.InvalidParam("unmarshal highlight queries failed: must set `%s` in query", f.key)
			}
			s, ok := raw.(string)
			if !ok {
				return nil, errcode.InvalidParam("unmarshal highlight queries failed: `%s` must be string", f.key)
			}
			*f.dst = s
		}
		if q.Type != QueryTextMatch {
			return nil, errcode.InvalidParam("unmarshal highlight queries failed: invalid highlight query type: %s", q.Type)
		}
		out = append(out, q)
	}
	return out, nil
}
