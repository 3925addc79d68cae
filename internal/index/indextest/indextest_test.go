package indextest

import (
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

func TestTopKAndRecall(t *testing.T) {
	scores := []float32{3, 1, 2, 1, 5}
	score := func(r int) (float32, bool) { return scores[r], r != 4 }
	got := TopK(len(scores), 3, index.L2, score)
	require.Equal(t, []index.Hit{{Row: 1, Score: 1}, {Row: 3, Score: 1}, {Row: 2, Score: 2}}, got)
	got = TopK(len(scores), 2, index.IP, score)
	require.Equal(t, []index.Hit{{Row: 0, Score: 3}, {Row: 2, Score: 2}}, got)
	require.Empty(t, TopK(0, 3, index.L2, score))

	want := []index.Hit{{Row: 1}, {Row: 2}, {Row: 3}, {Row: 4}}
	require.Equal(t, 0.5, Recall([]index.Hit{{Row: 2}, {Row: 9}, {Row: 4}}, want))
	require.Equal(t, 1.0, Recall(nil, nil))
	require.Equal(t, 0.0, Recall(nil, want))
}

func TestRequireOrdered(t *testing.T) {
	hits := []index.Hit{{Row: 3, Score: 1}, {Row: 5, Score: 1}, {Row: 1, Score: 2}}
	RequireOrdered(t, hits, index.L2)
	ft := &fakeT{}
	RequireOrdered(ft, hits, index.IP)
	require.True(t, ft.failed, "ascending scores are out of order under IP")
	ft = &fakeT{}
	RequireOrdered(ft, []index.Hit{{Row: 5, Score: 1}, {Row: 3, Score: 1}}, index.L2)
	require.True(t, ft.failed, "ties must be by ascending row")
}

func TestGaussian(t *testing.T) {
	v := Gaussian(rand.New(rand.NewPCG(1, 2)), 1000, 10)
	require.Len(t, v, 10000)
	var sum, sq float64
	for _, x := range v {
		sum += float64(x)
		sq += float64(x) * float64(x)
	}
	require.InDelta(t, 0, sum/1e4, 0.05)
	require.InDelta(t, 1, sq/1e4, 0.05)
}

var errBad = errors.New("bad")

// sumLoad loads a toy format: payload then one byte, the sum of the payload
// bytes, the file length and 7, so that every truncation and every flip is
// detectable.
func sumLoad(b []byte) (int, error) {
	if len(b) < 1 {
		return 0, errBad
	}
	var s byte
	for _, c := range b[:len(b)-1] {
		s += c
	}
	if s+byte(len(b))+7 != b[len(b)-1] {
		return 0, errBad
	}
	return len(b), nil
}

func TestRequireRejects(t *testing.T) {
	data := []byte{1, 2, 3, 4}
	data = append(data, 10+5+7)
	_, err := sumLoad(data)
	require.NoError(t, err)
	RequireRejects(t, data, errBad, sumLoad)

	// A loader that accepts a truncated file fails the check.
	ft := &fakeT{}
	RequireRejects(ft, data, errBad, func(b []byte) (int, error) {
		if len(b) == 2 {
			return 2, nil
		}
		return sumLoad(b)
	})
	require.True(t, ft.failed)
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true }
func (f *fakeT) Name() string          { return "fake" }

type blob []byte

func (b blob) Marshal(w io.Writer) error { _, err := w.Write(b); return err }

func TestMarshalGolden(t *testing.T) {
	load := FromReader(func(r io.Reader) (blob, error) { return io.ReadAll(r) })
	back := MarshalGolden(t, "blob.golden", blob("strata golden\n"), load)
	require.Equal(t, blob("strata golden\n"), back)

	if *update {
		return // the case below would overwrite the file
	}
	ft := &fakeT{}
	MarshalGolden(ft, "blob.golden", blob("other"), load)
	require.True(t, ft.failed, "different bytes fail")
}
