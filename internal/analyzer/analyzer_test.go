package analyzer

import (
	"hash/crc32"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// texts returns the token texts a builds of text.
func texts(t *testing.T, params, text string) []string {
	t.Helper()
	a, err := New(params)
	require.NoError(t, err, params)
	out := []string{}
	for _, tk := range a.Analyze(text) {
		out = append(out, tk.Text)
	}
	return out
}

// equivalence is one row of a tokenizer equivalence table: the tokens
// Milvus makes of text with params.
type equivalence struct {
	name, params, text string
	want               []string
}

func runTable(t *testing.T, rows []equivalence) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			require.Equal(t, r.want, texts(t, r.params, r.text))
		})
	}
}

// Built-in analyzers, as Milvus's analyzer documentation shows them.
func TestBuiltinAnalyzers(t *testing.T) {
	runTable(t, []equivalence{
		{
			"empty params are standard", "", "The Milvus vector database is built for scale!",
			[]string{"the", "milvus", "vector", "database", "is", "built", "for", "scale"},
		},
		{"empty object is standard", "{}", "Hello, World!", []string{"hello", "world"}},
		{
			"standard", `{"type":"standard"}`, "The Milvus vector database is built for scale!",
			[]string{"the", "milvus", "vector", "database", "is", "built", "for", "scale"},
		},
		{
			"standard keeps non-latin letters and digits", `{"type":"standard"}`, "Straße Ελληνικά русский 2025 v2.6 中文",
			[]string{"straße", "ελληνικά", "русский", "2025", "v2", "6", "中文"},
		},
		{
			"standard with stop words", `{"type":"standard","stop_words":["of","to","_english_"]}`,
			"The quick brown fox jumps over the lazy dog, and runs to the forest of pines",
			[]string{"quick", "brown", "fox", "jumps", "over", "lazy", "dog", "runs", "forest", "pines"},
		},
		{
			"english stems then drops stop words", `{"type":"english"}`, "The Milvus vector database is built for scale!",
			[]string{"milvus", "vector", "databas", "built", "scale"},
		},
		{
			"english: a stop word is matched after stemming", `{"type":"english"}`, "Its engine was running",
			[]string{"engin", "run"},
		},
		{
			"english with extra stop words", `{"type":"english","stop_words":["vector"]}`, "Vector databases are fast",
			[]string{"databas", "fast"},
		},
		{
			"chinese is jieba search mode without punctuation", `{"type":"chinese"}`, "Milvus 是一个高性能、高扩展性的向量数据库！",
			[]string{"Milvus", "是", "一个", "高性", "性能", "高性能", "高", "扩展", "展性", "扩展性", "的", "向量", "数据", "据库", "数据库"},
		},
		{
			"chinese with stop words", `{"type":"chinese","stop_words":["的","是"]}`, "这是一个测试的句子",
			[]string{"这是", "一个", "测试", "句子"},
		},
	})
}

// Tokenizers, each in string and object form.
func TestTokenizers(t *testing.T) {
	runTable(t, []equivalence{
		{
			"standard: runs of letters and digits, case kept", `{"tokenizer":"standard"}`, "O'Reilly can't jump 32.3 feet",
			[]string{"O", "Reilly", "can", "t", "jump", "32", "3", "feet"},
		},
		{"standard object", `{"tokenizer":{"type":"standard"}}`, "a_b c-d", []string{"a", "b", "c", "d"}},
		{
			"standard uax29", `{"tokenizer":{"type":"standard","uax29":true}}`, "O'Reilly can't jump 32.3 feet from 216.239.63.104",
			[]string{"O'Reilly", "can't", "jump", "32.3", "feet", "from", "216.239.63.104"},
		},
		{
			"standard uax29 cuts long words", `{"tokenizer":{"type":"standard","uax29":true,"max_token_length":5}}`, "jumped 日本語",
			[]string{"jumpe", "d", "日", "本", "語"},
		},
		{
			"whitespace splits on ASCII whitespace only", `{"tokenizer":"whitespace"}`, "The  Milvus\tvector-database!\nok",
			[]string{"The", "Milvus", "vector-database!", "ok"},
		},
		{
			"icu keeps every word segment", `{"tokenizer":"icu"}`, "Hello, world! 3.14",
			[]string{"Hello", ",", " ", "world", "!", " ", "3.14"},
		},
		{
			"jieba default is search mode with hmm", `{"tokenizer":"jieba"}`, "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
			[]string{"小明", "硕士", "毕业", "于", "中国", "科学", "学院", "科学院", "中国科学院", "计算", "计算所", "，", "后", "在", "日本", "京都", "大学", "日本京都大学", "深造"},
		},
		{
			"jieba exact", `{"tokenizer":{"type":"jieba","mode":"exact"}}`, "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
			[]string{"小明", "硕士", "毕业", "于", "中国科学院", "计算所", "，", "后", "在", "日本京都大学", "深造"},
		},
		{
			"jieba exact without hmm", `{"tokenizer":{"type":"jieba","mode":"exact","hmm":false}}`, "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
			[]string{"小", "明", "硕士", "毕业", "于", "中国科学院", "计算所", "，", "后", "在", "日本京都大学", "深造"},
		},
		{
			"jieba keeps spaces and latin words", `{"tokenizer":{"type":"jieba","mode":"exact"}}`, "测试文本 for jieba analyzer",
			[]string{"测试", "文本", " ", "for", " ", "jieba", " ", "analyzer"},
		},
		{
			"jieba search without hmm", `{"tokenizer":{"type":"jieba","hmm":false}}`, "milvus结巴分词器中文测试",
			[]string{"milvus", "结巴", "分词", "分词器", "中文", "测试"},
		},
		{
			"jieba custom dict only", `{"tokenizer":{"type":"jieba","dict":["结巴分词器"],"mode":"exact","hmm":false}}`, "milvus结巴分词器中文测试",
			[]string{"milvus", "结巴分词器", "中", "文", "测", "试"},
		},
		{
			"jieba default and custom dict", `{"tokenizer":{"type":"jieba","dict":["_default_","结巴分词器"],"mode":"exact"}}`, "milvus结巴分词器中文测试",
			[]string{"milvus", "结巴分词器", "中文", "测试"},
		},
		{
			"jieba ignores unknown keys", `{"tokenizer":{"type":"jieba","invalid_param":"value","mode":"exact"}}`, "中文测试",
			[]string{"中文", "测试"},
		},
	})
}

// Filters, as Milvus's filter documentation describes them.
func TestFilters(t *testing.T) {
	runTable(t, []equivalence{
		{"lowercase", `{"tokenizer":"standard","filter":["lowercase"]}`, "Milvus VECTOR", []string{"milvus", "vector"}},
		{
			"lowercase: final sigma and dotted I", `{"tokenizer":"standard","filter":["lowercase"]}`, "ΟΔΟΣ ΣΑΣ İstanbul",
			[]string{"οδος", "σας", "i\u0307stanbul"},
		},
		{
			"asciifolding", `{"tokenizer":"standard","filter":["asciifolding"]}`, "Café naïve Straße Ærø łódź",
			[]string{"Cafe", "naive", "Strasse", "AEro", "lodz"},
		},
		{
			"alphanumonly", `{"tokenizer":"whitespace","filter":["alphanumonly"]}`, "abc a-b 中文 x1 résumé",
			[]string{"abc", "x1"},
		},
		{"cncharonly", `{"tokenizer":"whitespace","filter":["cncharonly"]}`, "中文 abc 中a 123", []string{"中文", "中a"}},
		{"cnalphanumonly", `{"tokenizer":"whitespace","filter":["cnalphanumonly"]}`, "中文 abc ，。 -- x_y", []string{"中文", "abc", "x_y"}},
		{"removepunct", `{"tokenizer":"jieba","filter":["removepunct"]}`, "中文标点，测试。", []string{"中文", "标点", "中文标点", "测试"}},
		{"length", `{"tokenizer":"standard","filter":[{"type":"length","max":3}]}`, "a ab abc abcd", []string{"a", "ab", "abc"}},
		{
			"stop with a built-in list", `{"tokenizer":"standard","filter":["lowercase",{"type":"stop","stop_words":["_english_"]}]}`,
			"This is a Test of the filter",
			[]string{"test", "filter"},
		},
		{
			"stop is case-sensitive", `{"tokenizer":"standard","filter":[{"type":"stop","stop_words":["the"]}]}`,
			"The cat the dog",
			[]string{"The", "cat", "dog"},
		},
		{
			"stop with another language", `{"tokenizer":"standard","filter":[{"type":"stop","stop_words":["_french_"]}]}`,
			"le chat et la souris",
			[]string{"chat", "souris"},
		},
		{
			"empty stop list keeps everything", `{"tokenizer":"standard","filter":[{"type":"stop","stop_words":[]}]}`,
			"This is",
			[]string{"This", "is"},
		},
		{
			"stemmer", `{"tokenizer":"standard","filter":["lowercase",{"type":"stemmer","language":"english"}]}`,
			"running jumps easily",
			[]string{"run", "jump", "easili"},
		},
		{
			"stemmer language is case-insensitive", `{"tokenizer":"standard","filter":[{"type":"stemmer","language":"French"}]}`,
			"continuellement",
			[]string{"continuel"},
		},
		{
			"decompounder", `{"tokenizer":"whitespace","filter":[{"type":"decompounder","word_list":["dampf","schiff","fahrt","brot"]}]}`,
			"dampfschifffahrt brotbackautomat",
			[]string{"dampf", "schiff", "fahrt", "brotbackautomat"},
		},
		{
			"regex keeps matching tokens", `{"tokenizer":"standard","filter":[{"type":"regex","expr":"^[a-z]"}]}`,
			"apple Banana cherry 42",
			[]string{"apple", "cherry"},
		},
		{
			"synonym group", `{"tokenizer":"standard","filter":[{"type":"synonym","synonyms":["quick, fast"]}]}`,
			"quick fox",
			[]string{"fast", "quick", "fox"},
		},
		{
			"synonym mapping without expand", `{"tokenizer":"standard","filter":[{"type":"synonym","expand":false,"synonyms":["trans => translate"]}]}`,
			"trans text",
			[]string{"translate", "text"},
		},
		{"non-string non-object filter items are skipped", `{"tokenizer":"standard","filter":[1,"lowercase"]}`, "A", []string{"a"}},
	})
}

// Positions and offsets: byte offsets in the input; positions are ordinals
// for standard (gaps where stop words were) and rune offsets for jieba.
func TestPositionsAndOffsets(t *testing.T) {
	a, err := New(`{"tokenizer":"standard","filter":[{"type":"stop","stop_words":["the"]}]}`)
	require.NoError(t, err)
	require.Equal(t, []Token{
		{Text: "Straße", Start: 0, End: 7, Position: 0, Length: 1},
		{Text: "dog", Start: 12, End: 15, Position: 2, Length: 1},
	}, a.Analyze("Straße the dog"))

	j, err := New(`{"tokenizer":"jieba"}`)
	require.NoError(t, err)
	got := j.Analyze("Milvus 是一个高性能")
	require.Equal(t, []Token{
		{Text: "Milvus", Start: 0, End: 6, Position: 0, Length: 6},
		{Text: " ", Start: 6, End: 7, Position: 6, Length: 1},
		{Text: "是", Start: 7, End: 10, Position: 7, Length: 1},
		{Text: "一个", Start: 10, End: 16, Position: 8, Length: 2},
		{Text: "高性", Start: 16, End: 22, Position: 10, Length: 2},
		{Text: "性能", Start: 19, End: 25, Position: 11, Length: 2},
		{Text: "高性能", Start: 16, End: 25, Position: 10, Length: 3},
	}, got)
}

func TestEmptyText(t *testing.T) {
	for _, p := range []string{"", `{"tokenizer":"jieba"}`, `{"tokenizer":"icu"}`, `{"type":"english"}`} {
		a, err := New(p)
		require.NoError(t, err)
		require.Empty(t, a.Analyze(""), p)
	}
}

// Params Milvus refuses: code 1100, naming the key.
func TestBadParams(t *testing.T) {
	for _, c := range []struct{ params, msg string }{
		{`not json`, "json"},
		{`[1,2]`, "json map"},
		{`{"tokenizer":"invalid_tokenizer"}`, "unsupported tokenizer: invalid_tokenizer"},
		{`{"tokenizer":123}`, "tokenizer name should be string or dict"},
		{`{"tokenizer":null}`, "tokenizer name should be string or dict"},
		{`{"tokenizer":[]}`, "tokenizer name should be string or dict"},
		{`{"tokenizer":{"type":"invalid_type"}}`, "unsupported tokenizer: invalid_type"},
		{`{"tokenizer":{"type":null}}`, "tokenizer type should be string"},
		{`{"tokenizer":{"mode":"exact"}}`, "must set type"},
		{`{"tokenizer":"lindera"}`, "lindera"},
		{`{"filter":"invalid_filter"}`, "tokenizer name or type must be set"},
		{`{"tokenizer":"standard","filter":"lowercase"}`, "filter params should be array"},
		{`{"tokenizer":"standard","filter":["invalid_filter"]}`, "filter not found :invalid_filter"},
		{`{"tokenizer":"standard","filter":[{"type":null}]}`, "filter type should be string"},
		{`{"tokenizer":"standard","filter":[{"invalid_key":"value"}]}`, "no type field in filter params"},
		{`{"tokenizer":"standard","filter":[{"type":"invalid_filter_type"}]}`, "unsupport filter type: invalid_filter_type"},
		{`{"tokenizer":"standard","filter":[{"type":"stop"}]}`, "stop_words"},
		{`{"tokenizer":"standard","filter":[{"type":"stop","stop_words":"not_a_list"}]}`, "stop_words should be array"},
		{`{"tokenizer":"standard","filter":[{"type":"stop","stop_words":[123]}]}`, "stop_words list item should be string"},
		{`{"tokenizer":"standard","filter":[{"type":"stop","stop_words":null}]}`, "stop_words should be array"},
		{`{"tokenizer":"standard","filter":[{"type":"length"}]}`, "max"},
		{`{"tokenizer":"standard","filter":[{"type":"length","max":-1}]}`, "max"},
		{`{"tokenizer":"standard","filter":[{"type":"length","max":2.5}]}`, "max"},
		{`{"tokenizer":"standard","filter":[{"type":"stemmer","language":"klingon"}]}`, "unsupport language: klingon"},
		{`{"tokenizer":"standard","filter":[{"type":"stemmer"}]}`, "stemmer language"},
		{`{"tokenizer":"standard","filter":[{"type":"decompounder","word_list":"x"}]}`, "word_list"},
		{`{"tokenizer":"standard","filter":[{"type":"regex","expr":"("}]}`, "regex expression invalid"},
		{`{"tokenizer":"standard","filter":[{"type":"regex"}]}`, "expr"},
		{`{"tokenizer":"standard","filter":[{"type":"synonym","synonyms":["a b, c"]}]}`, "space between words"},
		{`{"tokenizer":"standard","filter":[{"type":"synonym","expand":"yes"}]}`, "expand"},
		{`{"tokenizer":"standard","extra":1}`, "unknown analyzer option key: extra"},
		{`{"type":"klingon"}`, "unknown build-in analyzer type: klingon"},
		{`{"type":1}`, "analyzer type should be string"},
		{`{"type":"english","stop_words":"the"}`, "stop_words should be array"},
		{`{"tokenizer":{"type":"jieba","dict":"not_a_list"}}`, "jieba tokenizer dict must be array"},
		{`{"tokenizer":{"type":"jieba","dict":null}}`, "jieba tokenizer dict must be array"},
		{`{"tokenizer":{"type":"jieba","dict":true}}`, "jieba tokenizer dict must be array"},
		{`{"tokenizer":{"type":"jieba","dict":{"invalid":"dict"}}}`, "jieba tokenizer dict must be array"},
		{`{"tokenizer":{"type":"jieba","dict":[123,456]}}`, "jieba tokenizer dict item must be string"},
		{`{"tokenizer":{"type":"jieba","mode":"invalid_mode"}}`, "mode"},
		{`{"tokenizer":{"type":"jieba","mode":123}}`, "mode must be string"},
		{`{"tokenizer":{"type":"jieba","hmm":"not_boolean"}}`, "hmm"},
		{`{"tokenizer":{"type":"jieba","hmm":123}}`, "hmm"},
		{`{"tokenizer":{"type":"standard","uax29":"true"}}`, "uax29"},
		{`{"tokenizer":{"type":"standard","max_token_length":5}}`, "requires uax29"},
		{`{"tokenizer":{"type":"standard","uax29":true,"max_token_length":0}}`, "max_token_length"},
	} {
		t.Run(c.params, func(t *testing.T) {
			_, err := New(c.params)
			require.Error(t, err)
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

func TestJiebaEdgeDicts(t *testing.T) {
	for _, p := range []string{
		`{"tokenizer":{"type":"jieba","dict":[]}}`,
		`{"tokenizer":{"type":"jieba","dict":["","valid_word"]}}`,
		`{"tokenizer":{"type":"jieba","dict":["valid_word","valid_word"]}}`,
		`{"tokenizer":{"type":"jieba","dict":["_default_"]}}`,
	} {
		require.NotEmpty(t, texts(t, p, "测试文本 for jieba analyzer"), p)
	}
}

func TestHashReadsFirst100Bytes(t *testing.T) {
	long := strings.Repeat("a", 100)
	require.Equal(t, Hash(long), Hash(long+"tail"))
	require.Equal(t, crc32.ChecksumIEEE([]byte("milvus")), Hash("milvus"))
}

func TestAnalyzerIsSafeForConcurrentUse(t *testing.T) {
	a, err := New(`{"tokenizer":{"type":"jieba","dict":["_default_","结巴分词器"]},"filter":["removepunct"]}`)
	require.NoError(t, err)
	want := a.Analyze("milvus结巴分词器中文测试，好的")
	done := make(chan []Token)
	for range 4 {
		go func() { done <- a.Analyze("milvus结巴分词器中文测试，好的") }()
	}
	for range 4 {
		require.Equal(t, want, <-done)
	}
}

// Every tokenizer's tokens are slices of the input at their offsets, in
// position order (but for jieba's search mode, which puts the words inside a
// word before it, as jieba-rs does), whatever the input (invalid UTF-8
// included).
func TestTokenizersOffsetsAreSlices(t *testing.T) {
	inputs := []string{
		"", " ", "\r\n\t", "a", "中", "Hello, World! 中文分词测试 3.14% C++ AT&T e-mail foo_bar",
		"\xff\xfe abc \xe4\xb8 中文", "小明硕士毕业于中国科学院计算所，后在日本京都大学深造。\r\n  Ελληνικά  русский",
		strings.Repeat("长", 300), strings.Repeat("ab ", 200),
	}
	for _, p := range []string{
		`{"tokenizer":"standard"}`, `{"tokenizer":{"type":"standard","uax29":true,"max_token_length":3}}`,
		`{"tokenizer":"whitespace"}`, `{"tokenizer":"icu"}`, `{"tokenizer":"jieba"}`,
		`{"tokenizer":{"type":"jieba","mode":"exact","hmm":false}}`, `{"tokenizer":{"type":"jieba","dict":["长长长"]}}`,
	} {
		a, err := New(p)
		require.NoError(t, err)
		for _, in := range inputs {
			last := -1
			for _, tk := range a.Analyze(in) {
				require.True(t, tk.Start >= 0 && tk.Start < tk.End && tk.End <= len(in), "%s %q %+v", p, in, tk)
				require.Equal(t, in[tk.Start:tk.End], tk.Text, "%s %q", p, in)
				if !strings.Contains(p, "jieba") || strings.Contains(p, "exact") {
					require.GreaterOrEqual(t, tk.Position, last, "%s %q", p, in)
					last = tk.Position
				}
				require.Positive(t, tk.Length)
			}
		}
	}
}
