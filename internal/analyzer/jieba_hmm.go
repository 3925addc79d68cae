package analyzer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed" // the HMM model
	"strconv"
	"strings"
	"sync"
)

// jiebaHMMGz is jieba's HMM model of words the dictionary lacks (as
// jieba-rs 0.7 ships it, MIT licence), gzipped. Its lines that do not start
// with "#" are: the start log-probabilities of the states B, E, M, S; their
// 4x4 transition log-probabilities; then one line a state of
// "char:log-probability" emissions, comma-separated.
//
//go:embed data/jieba_hmm.model.gz
var jiebaHMMGz []byte

// HMM states, in the model's order.
const (
	stB = iota
	stE
	stM
	stS
	numStates
)

// minLogProb is the log-probability of what the model never saw.
const minLogProb = -3.14e100

// prevStates are the states each state may follow.
var prevStates = [numStates][2]int{stB: {stE, stS}, stE: {stB, stM}, stM: {stM, stB}, stS: {stS, stE}}

// hmmModel is the parsed HMM model.
type hmmModel struct {
	start [numStates]float64
	trans [numStates][numStates]float64
	emit  map[rune][numStates]float64
}

// jiebaHMM is the HMM model, parsed once on first use.
var jiebaHMM = sync.OnceValue(func() *hmmModel {
	zr, err := gzip.NewReader(bytes.NewReader(jiebaHMMGz))
	if err != nil {
		panic("analyzer: embedded jieba HMM model: " + err.Error()) // fixed at build time
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if sc.Err() != nil || len(lines) != 1+numStates+numStates {
		panic("analyzer: embedded jieba HMM model is malformed")
	}
	m := &hmmModel{emit: map[rune][numStates]float64{}}
	floats := func(l string) []float64 {
		var out []float64
		for _, f := range strings.Fields(l) {
			v, _ := strconv.ParseFloat(f, 64)
			out = append(out, v)
		}
		return out
	}
	copy(m.start[:], floats(lines[0]))
	for i := range numStates {
		copy(m.trans[i][:], floats(lines[1+i]))
	}
	for s := range numStates {
		for _, kv := range strings.Split(lines[1+numStates+s], ",") {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				continue
			}
			r := []rune(k)
			p, err := strconv.ParseFloat(v, 64)
			if len(r) != 1 || err != nil {
				continue
			}
			e, seen := m.emit[r[0]]
			if !seen {
				e = [numStates]float64{minLogProb, minLogProb, minLogProb, minLogProb}
			}
			e[s] = p
			m.emit[r[0]] = e
		}
	}
	return m
})

// emission is the log-probability that state s emits r.
func (m *hmmModel) emission(r rune, s int) float64 {
	if e, ok := m.emit[r]; ok {
		return e[s]
	}
	return minLogProb
}

// viterbi returns the most probable state of each rune of rs (len > 1),
// ties going to the later state, as in jieba-rs.
func (m *hmmModel) viterbi(rs []rune) []int {
	n := len(rs)
	v := make([][numStates]float64, n)
	prev := make([][numStates]int, n)
	for s := range numStates {
		v[0][s] = m.start[s] + m.emission(rs[0], s)
	}
	for t := 1; t < n; t++ {
		for s := range numStates {
			em := m.emission(rs[t], s)
			best, from := 0.0, -1
			for _, p := range prevStates[s] {
				x := v[t-1][p] + m.trans[p][s] + em
				if from < 0 || x > best || x == best && p > from {
					best, from = x, p
				}
			}
			v[t][s], prev[t][s] = best, from
		}
	}
	last := stE
	if v[n-1][stS] >= v[n-1][stE] {
		last = stS
	}
	path := make([]int, n)
	path[n-1] = last
	for t := n - 1; t > 0; t-- {
		path[t-1] = prev[t][path[t]]
	}
	return path
}
