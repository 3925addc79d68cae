package analyzer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed" // the jieba dictionary
	"math"
	"strconv"
	"strings"
	"sync"
)

// jiebaDictGz is jieba's default dictionary (as jieba-rs 0.7 ships it, MIT
// licence): one "word frequency" a line, gzipped.
//
//go:embed data/jieba_dict.txt.gz
var jiebaDictGz []byte

// dict is a jieba dictionary: word frequencies, with every prefix of a word
// present at frequency 0 so that a scan can stop at the first non-prefix.
// A dictionary with user words is an overlay on the shared default one
// (base), which it never changes.
type dict struct {
	freq  map[string]int
	total int
	base  *dict
}

// lookup returns frag's frequency (0 when it is no word) and whether it is
// a word or the prefix of one.
func (d *dict) lookup(frag string) (int, bool) {
	f, ok := d.freq[frag]
	if f > 0 || d.base == nil {
		return f, ok
	}
	bf, bok := d.base.lookup(frag)
	return bf, ok || bok
}

// add puts word with frequency f into d, keeping the total and the prefixes.
func (d *dict) add(word string, f int) {
	if old, _ := d.lookup(word); old > 0 {
		d.total -= old
	}
	d.freq[word] = f
	d.total += f
	for i := range word {
		if i == 0 {
			continue
		}
		if _, ok := d.freq[word[:i]]; !ok {
			d.freq[word[:i]] = 0
		}
	}
}

// overlay returns an empty dictionary over d, for user words.
func (d *dict) overlay() *dict {
	return &dict{freq: map[string]int{}, total: d.total, base: d}
}

// jiebaShared is the default dictionary and HMM model, loaded once, on the
// first use of a jieba tokenizer (about 0.6 s and 32 MiB of heap), and shared by
// every analyzer.
var jiebaShared = sync.OnceValue(func() *dict {
	d := &dict{freq: make(map[string]int, 600_000)}
	zr, err := gzip.NewReader(bytes.NewReader(jiebaDictGz))
	if err != nil {
		panic("analyzer: embedded jieba dictionary: " + err.Error()) // the embedded file is fixed at build time
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		word, f, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || word == "" {
			continue
		}
		d.add(word, n)
	}
	if err := sc.Err(); err != nil {
		panic("analyzer: embedded jieba dictionary: " + err.Error())
	}
	return d
})

// emptyDict is a dictionary without words (jieba's "dict" without
// "_default_").
func emptyDict() *dict { return &dict{freq: map[string]int{}} }

// suggestFreq is the frequency jieba gives a user word without one: just
// enough for the word to win over the pieces the dictionary cuts it into.
func suggestFreq(d *dict, word string) int {
	logTotal := math.Log(float64(d.total))
	lf := 0.0
	j := &jiebaTokenizer{dict: d}
	j.cutBlock(word, 0, false, func(s, e int) {
		f, _ := d.lookup(word[s:e])
		if f <= 0 {
			f = 1
		}
		lf += math.Log(float64(f)) - logTotal
	})
	e := math.Exp(lf + logTotal)
	n := 0
	switch {
	case math.IsNaN(e) || e < 0:
	case e > 1e15:
		n = 1e15
	default:
		n = int(e)
	}
	n++
	if f, _ := d.lookup(word); f > n {
		n = f
	}
	return n
}
