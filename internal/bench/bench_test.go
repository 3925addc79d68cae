package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

func TestParseSynthetic(t *testing.T) {
	n, dim, err := ParseSynthetic("20000, 64")
	require.NoError(t, err)
	require.Equal(t, 20000, n)
	require.Equal(t, 64, dim)
	for _, bad := range []string{"", "5", "a,4", "4,0", "-1,3"} {
		_, _, err := ParseSynthetic(bad)
		require.Error(t, err, bad)
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	a, b := Synthetic(300, 8, 10, 3), Synthetic(300, 8, 10, 3)
	require.Equal(t, a.Base, b.Base)
	require.Equal(t, a.Queries, b.Queries)
	require.Equal(t, 300, a.N())
	require.Equal(t, 10, a.NQ())
	require.NotEqual(t, a.Base, Synthetic(300, 8, 10, 4).Base)
}

// writeIDX writes an IDX3 file of n images of 2×3 pixels, pixel value
// (image + position) mod 256, gzipped or not.
func writeIDX(t *testing.T, path string, n int, gz bool) {
	t.Helper()
	var raw bytes.Buffer
	for _, v := range []uint32{0x803, uint32(n), 2, 3} {
		require.NoError(t, binary.Write(&raw, binary.BigEndian, v))
	}
	for i := range n {
		for j := range 6 {
			raw.WriteByte(byte(i + j))
		}
	}
	out := raw.Bytes()
	if gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, err := zw.Write(out)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		out = z.Bytes()
	}
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

func TestLoadFashionMNIST(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, filepath.Join(dir, "train-images-idx3-ubyte.gz"), 7, true)
	writeIDX(t, filepath.Join(dir, "t10k-images-idx3-ubyte"), 5, false)
	ds, err := LoadFashionMNIST(dir, 3)
	require.NoError(t, err)
	require.Equal(t, 6, ds.Dim)
	require.Equal(t, 7, ds.N())
	require.Equal(t, 3, ds.NQ())
	require.Equal(t, []float32{2, 3, 4, 5, 6, 7}, ds.Base[12:18])
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, ds.Query(1))

	_, err = LoadFashionMNIST(t.TempDir(), 0)
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "t10k-images-idx3-ubyte"), []byte("not an idx file!"), 0o600))
	_, err = LoadFashionMNIST(dir, 0)
	require.ErrorContains(t, err, "magic")
}

func TestGroundTruth(t *testing.T) {
	ds := Synthetic(500, 12, 20, 9)
	for _, m := range []index.Metric{index.L2, index.IP, index.Cosine} {
		got := GroundTruth(ds, m, 5, 3)
		for i := range ds.NQ() {
			q := ds.Query(i)
			type sc struct {
				row int32
				s   float64
			}
			all := make([]sc, ds.N())
			for r := range ds.N() {
				row := ds.Base[r*ds.Dim : (r+1)*ds.Dim]
				var s float64
				switch m {
				case index.L2:
					s = float64(distance.L2Squared(q, row))
				case index.IP:
					s = -float64(distance.Dot(q, row))
				case index.Cosine:
					s = -float64(distance.Cosine(q, row))
				}
				all[r] = sc{int32(r), s}
			}
			slices.SortStableFunc(all, func(a, b sc) int {
				switch {
				case a.s < b.s:
					return -1
				case a.s > b.s:
					return 1
				}
				return 0
			})
			want := make([]int32, 5)
			for j := range want {
				want[j] = all[j].row
			}
			require.Equal(t, want, got[i], "%v query %d", m, i)
		}
	}
	require.Equal(t, []int32{3, 1, 0}, smallest([]float32{2, 1, 5, 0, 9}, 3))
	require.Equal(t, []int32{0, 1}, smallest([]float32{1, 1}, 5)) // ties by row
}

func TestRun(t *testing.T) {
	ds := Synthetic(3000, 16, 40, 5)
	for _, typ := range IndexTypes {
		t.Run(typ, func(t *testing.T) {
			cfg := Defaults()
			cfg.Index, cfg.Python, cfg.Rounds, cfg.Nlist = typ, "", 1, 16
			cfg.HNSW.EfConstruction = 64
			res, err := Run(context.Background(), cfg, ds, t.Logf)
			require.NoError(t, err)
			require.Equal(t, cfg.DefaultSweep(), paramsOf(res.Rows))
			last := res.Rows[len(res.Rows)-1]
			floor := 0.95
			switch typ {
			case "IVF_PQ":
				floor = 0.5 // m=2 codes of 8 bits for 16 floats
			case "HNSW_PQ":
				floor = 0.6 // m=4 codes of 8 bits for 16 floats
			case "IVF_RABITQ":
				floor = 0.4 // 16 bits for 16 floats, no refine
			}
			require.GreaterOrEqual(t, last.Recall, floor)
			if typ == "FLAT" || typ == "IVF_FLAT" {
				require.InDelta(t, 1.0, last.Recall, 1e-9)
			}
			for _, r := range res.Rows {
				require.Positive(t, r.QPS1)
				require.Positive(t, r.QPSN)
			}
			require.Positive(t, res.MemoryBytes)
			var out bytes.Buffer
			require.NoError(t, res.Print(&out))
			require.Contains(t, out.String(), "strata "+typ)
			require.Contains(t, out.String(), "comparison disabled")
			lines := 6 + 1 + len(res.Rows)
			if typ == "FLAT" {
				lines += 4 // bandwidth, single-query limit, batched
				if f := res.Flat; f.PeakGFLOPs > 0 {
					lines++ // compute limit
					require.Positive(t, f.BatchPercent())
					require.InDelta(t, f.PeakGFLOPs*1e9/float64(2*ds.N()*ds.Dim), f.ComputeLimitQPS, 1e-6*f.ComputeLimitQPS)
				}
				f := res.Flat
				require.NotNil(t, f)
				require.Positive(t, f.StreamGBs)
				require.Positive(t, f.StreamNGBs)
				require.InDelta(t, f.StreamGBs*1e9/float64(len(ds.Base)*4), f.LimitQPS, 1e-6*f.LimitQPS)
				require.InDelta(t, 1.0, f.BatchRecall, 1e-9)
				require.Positive(t, f.BatchQPS1)
				require.Positive(t, f.BatchCPUQPS1)
				require.Positive(t, f.BatchQPSN)
				require.Positive(t, f.SinglePercent(last))
				require.Contains(t, out.String(), "% of it")
			} else {
				require.Nil(t, res.Flat)
			}
			require.Equal(t, lines, strings.Count(out.String(), "\n"), out.String())
		})
	}
}

func paramsOf(rows []Row) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.Param
	}
	return out
}

func TestConfig(t *testing.T) {
	cfg := Defaults()
	require.NoError(t, cfg.Validate())
	require.Equal(t, []int{10, 16, 32, 64, 128, 256, 512}, cfg.DefaultSweep())
	cfg.Index = "IVF_PQ"
	require.Equal(t, []int{1, 2, 4, 8, 16, 32, 64, 128}, cfg.DefaultSweep())
	require.Equal(t, "nlist=128 m=98 nbits=8", cfg.Params(784))
	require.Equal(t, "nlist=128 m=8 nbits=8", cfg.Params(64))
	require.Equal(t, 4, defaultM(36)) // 36/8 = 4 divides 36
	require.Equal(t, 3, defaultM(39)) // 39/8 = 4 does not; 3 does
	require.Equal(t, 1, defaultM(7))
	cfg.Index, cfg.K, cfg.Sweep = "ANNOY", 0, []int{0}
	err := cfg.Validate()
	require.ErrorContains(t, err, `index "ANNOY"`)
	require.ErrorContains(t, err, "k(0)")
	require.ErrorContains(t, err, "sweep value 0")
}

// benchPython is the interpreter TestCompare uses: $STRATA_BENCH_PYTHON, or
// python3.
func benchPython() string {
	if py := os.Getenv("STRATA_BENCH_PYTHON"); py != "" {
		return py
	}
	return "python3"
}

// TestCompare runs the embedded script when the interpreter has hnswlib and
// faiss; it skips otherwise, since the comparison is optional by design.
func TestCompare(t *testing.T) {
	py, err := exec.LookPath(benchPython())
	if err != nil || exec.Command(py, "-c", "import numpy, hnswlib, faiss").Run() != nil {
		t.Skip("no python with numpy, hnswlib and faiss (set STRATA_BENCH_PYTHON)")
	}
	ds := Synthetic(2000, 16, 30, 5)
	cfg := Defaults()
	cfg.Python = py
	cfg.Rounds, cfg.HNSW.EfConstruction, cfg.Sweep = 1, 64, []int{10, 40}
	res, err := Run(context.Background(), cfg, ds, t.Logf)
	require.NoError(t, err)
	require.Len(t, res.Compare, 2, res.CompareNote)
	require.Contains(t, res.Compare[0].Library, "hnswlib")
	require.Contains(t, res.Compare[1].Library, "faiss")
	for _, l := range res.Compare {
		require.Len(t, l.Rows, 2)
		require.GreaterOrEqual(t, l.Rows[1].Recall, 0.9)
		require.Positive(t, l.Rows[1].CPUQPS1)
		require.Nil(t, l.Batch)
	}
	var out bytes.Buffer
	require.NoError(t, res.Print(&out))
	require.Contains(t, out.String(), "CPU-QPS1 ratio")
	t.Log("\n" + out.String())

	cfg.Index, cfg.Sweep = "FLAT", nil
	res, err = Run(context.Background(), cfg, ds, t.Logf)
	require.NoError(t, err)
	require.Len(t, res.Compare, 1, res.CompareNote)
	b := res.Compare[0].Batch
	require.NotNil(t, b)
	require.InDelta(t, 1.0, b.Recall, 1e-9)
	require.InDelta(t, 1.0, res.Compare[0].Rows[0].Recall, 1e-9)
	require.Positive(t, b.CPUQPS1)
	out.Reset()
	require.NoError(t, res.Print(&out))
	require.Contains(t, out.String(), "batched: recall 1.0000")
	t.Log("\n" + out.String())

	cfg.Python = "no-such-python-interpreter"
	res, err = Run(context.Background(), cfg, ds, t.Logf)
	require.NoError(t, err)
	require.Nil(t, res.Compare)
	require.Contains(t, res.CompareNote, "not found")
}
