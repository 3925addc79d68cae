package analyzer

import (
	"math"
	"regexp"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/errcode"
)

// jiebaTokenizer is jieba's Chinese word segmentation, as jieba-rs (which
// Milvus embeds) does it: the text is split into blocks of CJK characters
// and ASCII letters/digits; in each block a DAG of dictionary words gives
// the most probable cut, and runs of characters the dictionary does not
// know are cut by an HMM (jieba_hmm.go). Other characters are tokens of
// their own, and so is each whitespace character. In search mode, the
// dictionary words of two and three characters inside a longer word are
// tokens too, before it. A token's position is the rune offset of its
// start and its length its rune count, as jieba-rs reports them.
type jiebaTokenizer struct {
	dict   *dict
	search bool
	hmm    bool
}

// defaultJieba is the jieba tokenizer Milvus uses without params: the
// default dictionary, search mode, HMM on.
func defaultJieba() tokenizer { return lazyJieba{} }

// lazyJieba is the default jieba tokenizer; its dictionary is loaded on the
// first text it analyzes, so that validating a schema stays cheap.
type lazyJieba struct{}

func (lazyJieba) tokenize(text string) []Token {
	j := jiebaTokenizer{dict: jiebaShared(), search: true, hmm: true}
	return j.tokenize(text)
}

// newJiebaTokenizer builds a jieba tokenizer from its params: "dict" (words,
// "_default_" for the default dictionary; without "dict" the default one),
// "mode" ("search", the default, or "exact") and "hmm" (default true).
// Unknown keys are ignored, as Milvus does.
func newJiebaTokenizer(p map[string]any) (tokenizer, error) {
	useDefault, words := true, []string(nil)
	if v, ok := p["dict"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return nil, errcode.Invalid("jieba tokenizer dict must be array")
		}
		useDefault = false
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, errcode.Invalid("jieba tokenizer dict item must be string")
			}
			if s == "_default_" {
				useDefault = true
			} else if s != "" {
				words = append(words, s)
			}
		}
	}
	search := true
	if v, ok := p["mode"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, errcode.Invalid("jieba tokenizer mode must be string")
		}
		switch s {
		case "exact":
			search = false
		case "search":
		default:
			return nil, errcode.Invalid(`jieba tokenizer mode must be "exact" or "search"`)
		}
	}
	useHMM, err := boolParam(p, "hmm", "jieba tokenizer", true)
	if err != nil {
		return nil, err
	}
	if useDefault && len(words) == 0 {
		if search && useHMM {
			return defaultJieba(), nil
		}
		return &lazyMode{search: search, hmm: useHMM}, nil
	}
	var d *dict
	if useDefault {
		d = jiebaShared().overlay()
	} else {
		d = emptyDict()
	}
	for _, w := range words {
		d.add(w, suggestFreq(d, w))
	}
	return &jiebaTokenizer{dict: d, search: search, hmm: useHMM}, nil
}

// lazyMode is a jieba tokenizer with the default dictionary in a
// non-default mode, loading the dictionary on first use.
type lazyMode struct{ search, hmm bool }

func (l *lazyMode) tokenize(text string) []Token {
	j := jiebaTokenizer{dict: jiebaShared(), search: l.search, hmm: l.hmm}
	return j.tokenize(text)
}

func (j *jiebaTokenizer) tokenize(text string) []Token {
	var out []Token
	// runeAt maps a byte offset to its rune index, for positions.
	runeIdx := 0
	last := 0
	runeAt := func(b int) int {
		runeIdx += utf8.RuneCountInString(text[last:b])
		last = b
		return runeIdx
	}
	j.cut(text, func(s, e int) {
		w := text[s:e]
		pos := runeAt(s)
		width := utf8.RuneCountInString(w)
		if j.search && width > 2 {
			j.grams(w, s, pos, width, 2, &out)
			if width > 3 {
				j.grams(w, s, pos, width, 3, &out)
			}
		}
		out = append(out, Token{Text: w, Start: s, End: e, Position: pos, Length: width})
	})
	return out
}

// grams appends the dictionary words of n runes inside word w (at byte s,
// rune position pos).
func (j *jiebaTokenizer) grams(w string, s, pos, width, n int, out *[]Token) {
	starts := make([]int, 0, width+1)
	for i := range w {
		starts = append(starts, i)
	}
	starts = append(starts, len(w))
	for i := 0; i+n <= width; i++ {
		g := w[starts[i]:starts[i+n]]
		if f, _ := j.dict.lookup(g); f > 0 {
			*out = append(*out, Token{Text: g, Start: s + starts[i], End: s + starts[i+n], Position: pos + i, Length: n})
		}
	}
}

// reHanBlock matches the blocks jieba cuts with its dictionary (jieba-rs's
// RE_HAN_DEFAULT).
var reHanBlock = regexp.MustCompile(`[\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}\x{F900}-\x{FAFF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{2CEB0}-\x{2EBEF}\x{2F800}-\x{2FA1F}a-zA-Z0-9+#&._%\-]+`)

// cut calls emit with the byte span of each word of text, in order.
func (j *jiebaTokenizer) cut(text string, emit func(s, e int)) {
	prev := 0
	for _, m := range reHanBlock.FindAllStringIndex(text, -1) {
		cutOther(text, prev, m[0], emit)
		j.cutBlock(text[m[0]:m[1]], m[0], j.hmm, emit)
		prev = m[1]
	}
	cutOther(text, prev, len(text), emit)
}

// cutOther emits the characters of text[s:e] one by one ("\r\n" as one).
func cutOther(text string, s, e int, emit func(s, e int)) {
	for i := s; i < e; {
		if text[i] == '\r' && i+1 < e && text[i+1] == '\n' {
			emit(i, i+2)
			i += 2
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:e])
		emit(i, i+n)
		i += n
	}
}

// cutBlock cuts one block (at byte base of the text) by the most probable
// path through its DAG of dictionary words.
func (j *jiebaTokenizer) cutBlock(block string, base int, useHMM bool, emit func(s, e int)) {
	idx := make([]int, 0, len(block)+1)
	for i := range block {
		idx = append(idx, i)
	}
	n := len(idx)
	idx = append(idx, len(block))
	route := j.route(block, idx)

	bufStart := -1
	flush := func(end int) {
		if bufStart < 0 {
			return
		}
		bs := bufStart
		bufStart = -1
		if !useHMM {
			emit(base+idx[bs], base+idx[end])
			return
		}
		if end-bs == 1 {
			emit(base+idx[bs], base+idx[end])
			return
		}
		w := block[idx[bs]:idx[end]]
		if f, _ := j.dict.lookup(w); f > 0 {
			for k := bs; k < end; k++ {
				emit(base+idx[k], base+idx[k+1])
			}
			return
		}
		hmmCut(w, base+idx[bs], emit)
	}
	for x := 0; x < n; {
		y := route[x]
		single := y-x == 1
		if single && (useHMM || isASCIIAlnum(block[idx[x]])) {
			if bufStart < 0 {
				bufStart = x
			}
		} else {
			flush(x)
			emit(base+idx[x], base+idx[y])
		}
		x = y
	}
	flush(n)
}

func isASCIIAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// route returns, for each rune index k of block, the end (rune index) of
// the word starting at k on the most probable path.
func (j *jiebaTokenizer) route(block string, idx []int) []int {
	n := len(idx) - 1
	logTotal := math.Log(float64(j.dict.total))
	prob := make([]float64, n+1)
	end := make([]int, n+1)
	var ends []int
	for k := n - 1; k >= 0; k-- {
		ends = ends[:0]
		for i := k + 1; i <= n; i++ {
			f, ok := j.dict.lookup(block[idx[k]:idx[i]])
			if !ok {
				break
			}
			if f > 0 {
				ends = append(ends, i)
			}
		}
		if len(ends) == 0 {
			ends = append(ends, k+1)
		}
		best, bestEnd := 0.0, -1
		for _, e := range ends {
			f, _ := j.dict.lookup(block[idx[k]:idx[e]])
			if f <= 0 {
				f = 1
			}
			// Ties go to the longer word, as in jieba.
			if v := math.Log(float64(f)) - logTotal + prob[e]; bestEnd < 0 || v >= best {
				best, bestEnd = v, e
			}
		}
		prob[k], end[k] = best, bestEnd
	}
	return end
}

// Characters the HMM cuts (jieba-rs's hmm RE_HAN) and the runs it keeps
// whole around them (RE_SKIP).
var (
	reHMMHan  = regexp.MustCompile(`[\x{4E00}-\x{9FD5}]+`)
	reHMMSkip = regexp.MustCompile(`[a-zA-Z0-9]+(?:.\d+)?%?`)
)

// hmmCut cuts w (at byte base) with the HMM: runs of ideographs by the
// Viterbi path of B/M/E/S states, the rest into letter-digit runs and what
// lies between them.
func hmmCut(w string, base int, emit func(s, e int)) {
	prev := 0
	other := func(s, e int) {
		p := s
		for _, m := range reHMMSkip.FindAllStringIndex(w[s:e], -1) {
			if m[0]+s > p {
				emit(base+p, base+s+m[0])
			}
			emit(base+s+m[0], base+s+m[1])
			p = s + m[1]
		}
		if p < e {
			emit(base+p, base+e)
		}
	}
	for _, m := range reHMMHan.FindAllStringIndex(w, -1) {
		other(prev, m[0])
		viterbiCut(w[m[0]:m[1]], base+m[0], emit)
		prev = m[1]
	}
	other(prev, len(w))
}

// viterbiCut emits the words of a run of ideographs by the HMM's states:
// a word from each B to the next E, a word of each S.
func viterbiCut(s string, base int, emit func(s, e int)) {
	runes := []rune(s)
	off := make([]int, 0, len(runes)+1)
	for i := range s {
		off = append(off, i)
	}
	off = append(off, len(s))
	if len(runes) == 1 {
		emit(base, base+len(s))
		return
	}
	states := jiebaHMM().viterbi(runes)
	begin, next := 0, 0
	for i := range runes {
		switch states[i] {
		case stB:
			begin = i
		case stE:
			emit(base+off[begin], base+off[i+1])
			next = i + 1
		case stS:
			emit(base+off[i], base+off[i+1])
			next = i + 1
		}
	}
	if next < len(runes) {
		emit(base+off[next], base+len(s))
	}
}
