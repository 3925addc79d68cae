//go:build bench

package hnsw

// The Fashion-MNIST benchmark. It is behind the "bench" build tag because it
// needs the data set (Debian package dataset-fashion-mnist) and takes
// minutes:
//
//	go test -tags bench -run TestFashionMNIST -v -timeout 60m ./internal/index/hnsw/ \
//	    -fmnist=/usr/share/datasets/fashion-mnist [-hnswlib=python3] [-single-build]
//
// It prints recall@10 and single-thread QPS for each ef, for Strata and,
// with -hnswlib, for hnswlib run through testdata/hnswlib_bench.py on the
// same data and ground truth. -cpuprofile works as usual.

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/distance"
)

var (
	fmnistDir   = flag.String("fmnist", "", "directory with the Fashion-MNIST idx .gz files")
	hnswlibPy   = flag.String("hnswlib", "", "python interpreter with hnswlib, to measure it side by side")
	singleBuild = flag.Bool("single-build", false, "also time single-threaded builds")
	efList      = flag.String("ef", "10,16,20,32,48,64,128", "ef values")
	indexCache  = flag.String("index-cache", "", "reuse the index marshalled at this path (build and save it if absent)")
	rounds      = flag.Int("rounds", 3, "timed passes over the queries per ef; the fastest counts")
)

const benchK = 10

// loadIDX reads a gzip'd IDX3 image file as float32 rows.
func loadIDX(t *testing.T, path string) ([]float32, int) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, uint32(0x803), binary.BigEndian.Uint32(b))
	n := int(binary.BigEndian.Uint32(b[4:]))
	dim := int(binary.BigEndian.Uint32(b[8:]) * binary.BigEndian.Uint32(b[12:]))
	out := make([]float32, n*dim)
	for i, v := range b[16 : 16+n*dim] {
		out[i] = float32(v)
	}
	return out, dim
}

// groundTruth returns the exact benchK nearest train rows of every query,
// cached in the temp directory as little-endian int32.
func groundTruth(t *testing.T, train, test []float32, dim int) ([]int32, string) {
	nq, n := len(test)/dim, len(train)/dim
	path := filepath.Join(os.TempDir(), fmt.Sprintf("strata-fmnist-gt-%d-%d-%d.bin", n, nq, benchK))
	if b, err := os.ReadFile(path); err == nil && len(b) == nq*benchK*4 {
		gt := make([]int32, nq*benchK)
		for i := range gt {
			gt[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return gt, path
	}
	start := time.Now()
	gt := make([]int32, nq*benchK)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			d := make([]float32, n)
			for q := w; q < nq; q += workers {
				distance.L2SquaredBatch(test[q*dim:(q+1)*dim], train, d)
				var h maxHeap
				for i, v := range d {
					it := item{v, uint32(i)}
					if len(h) < benchK {
						h.push(it)
					} else if before(it, h[0]) {
						h.replaceTop(it)
					}
				}
				for j := benchK - 1; j >= 0; j-- {
					gt[q*benchK+j] = int32(h.pop().id)
				}
			}
		})
	}
	wg.Wait()
	b := make([]byte, 4*len(gt))
	for i, v := range gt {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
	t.Logf("ground truth computed in %v, cached at %s", time.Since(start).Round(time.Millisecond), path)
	return gt, path
}

type efResult struct {
	ef     int
	recall float64
	qps    float64 // queries per wall-clock second
	cpuQPS float64 // queries per second of this thread's CPU time
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU(t *testing.T) time.Duration {
	var ru unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestFashionMNIST(t *testing.T) {
	if *fmnistDir == "" {
		t.Skip("set -fmnist=DIR (e.g. /usr/share/datasets/fashion-mnist)")
	}
	trainPath := filepath.Join(*fmnistDir, "train-images-idx3-ubyte.gz")
	testPath := filepath.Join(*fmnistDir, "t10k-images-idx3-ubyte.gz")
	train, dim := loadIDX(t, trainPath)
	test, _ := loadIDX(t, testPath)
	n, nq := len(train)/dim, len(test)/dim
	t.Logf("Fashion-MNIST: %d train, %d queries, dim %d; kernels %s; GOMAXPROCS %d",
		n, nq, dim, distance.Impl(), runtime.GOMAXPROCS(0))
	gt, gtPath := groundTruth(t, train, test, dim)

	cfg := Config{M: 16, EfConstruction: 200, Seed: 100}
	var buildST, buildSTCPU time.Duration
	if *singleBuild {
		c := cfg
		c.Workers = 1
		runtime.LockOSThread()
		start, c0 := time.Now(), threadCPU(t)
		_, err := Build(context.Background(), train, dim, index.L2, c)
		require.NoError(t, err)
		buildST, buildSTCPU = time.Since(start), threadCPU(t)-c0
		runtime.UnlockOSThread()
	}
	var idx *Index
	var buildMT time.Duration
	if f, err := os.Open(*indexCache); err == nil {
		idx, err = Unmarshal(bufio.NewReader(f))
		f.Close()
		require.NoError(t, err)
		t.Logf("loaded index from %s", *indexCache)
	} else {
		start := time.Now()
		idx, err = Build(context.Background(), train, dim, index.L2, cfg)
		require.NoError(t, err)
		buildMT = time.Since(start)
		if *indexCache != "" {
			f, err := os.Create(*indexCache)
			require.NoError(t, err)
			require.NoError(t, idx.Marshal(f))
			require.NoError(t, f.Close())
		}
	}

	var efs []int
	for _, s := range strings.Split(*efList, ",") {
		var ef int
		_, err := fmt.Sscan(s, &ef)
		require.NoError(t, err)
		efs = append(efs, ef)
	}
	var ours []efResult
	for _, ef := range efs {
		p := index.SearchParams{Ef: ef}
		for q := range 200 { // warm up
			_, err := idx.Search(test[q*dim:(q+1)*dim], benchK, p, nil)
			require.NoError(t, err)
		}
		results := make([][]index.Hit, nq)
		// The machine may be shared: take the fastest pass, and also count
		// the CPU time of the (locked) thread, which excludes time spent
		// descheduled.
		el, cpu := time.Duration(1<<62), time.Duration(1<<62)
		runtime.LockOSThread()
		for range *rounds {
			start, c0 := time.Now(), threadCPU(t)
			for q := range nq {
				results[q], _ = idx.Search(test[q*dim:(q+1)*dim], benchK, p, nil)
			}
			el, cpu = min(el, time.Since(start)), min(cpu, threadCPU(t)-c0)
		}
		runtime.UnlockOSThread()
		hit := 0
		for q, hs := range results {
			want := gt[q*benchK : (q+1)*benchK]
			for _, h := range hs {
				for _, w := range want {
					if h.Row == w {
						hit++
						break
					}
				}
			}
		}
		ours = append(ours, efResult{ef, float64(hit) / float64(nq*benchK), float64(nq) / el.Seconds(), float64(nq) / cpu.Seconds()})
	}

	theirs := map[int]efResult{}
	var libBuildST, libBuildSTCPU, libBuildMT float64
	if *hnswlibPy != "" {
		args := []string{
			"testdata/hnswlib_bench.py", "--train", trainPath, "--test", testPath,
			"--gt", gtPath, "--ef", *efList, "--rounds", fmt.Sprint(*rounds),
		}
		if *singleBuild {
			args = append(args, "--single-build")
		}
		cmd := exec.Command(*hnswlibPy, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r struct {
				BuildS  *float64 `json:"build_s"`
				CPUS    float64  `json:"cpu_s"`
				Threads int      `json:"threads"`
				Ef      int      `json:"ef"`
				Recall  float64  `json:"recall"`
				QPS     float64  `json:"qps"`
				CPUQPS  float64  `json:"cpu_qps"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
			switch {
			case r.BuildS != nil && r.Threads == 1:
				libBuildST, libBuildSTCPU = *r.BuildS, r.CPUS
			case r.BuildS != nil:
				libBuildMT = *r.BuildS
			default:
				theirs[r.Ef] = efResult{r.Ef, r.Recall, r.QPS, r.CPUQPS}
			}
		}
		require.NoError(t, cmd.Wait())
	}

	var sb strings.Builder
	fmt.Fprintf(&sb, "\nFashion-MNIST %dx%d, %d queries, k=%d, M=%d, efConstruction=%d, GOMAXPROCS=%d\n",
		n, dim, nq, benchK, cfg.M, cfg.EfConstruction, runtime.GOMAXPROCS(0))
	fmt.Fprintf(&sb, "build wall (1-thread CPU): strata 1 thread %.1fs (%.1fs), all cores %.1fs; hnswlib 1 thread %.1fs (%.1fs), all cores %.1fs\n",
		buildST.Seconds(), buildSTCPU.Seconds(), buildMT.Seconds(), libBuildST, libBuildSTCPU, libBuildMT)
	fmt.Fprintf(&sb, "QPS: one thread, best of %d passes; CPU QPS: queries per second of that thread's CPU time\n", *rounds)
	fmt.Fprintf(&sb, "| ef | recall@10 strata | recall@10 hnswlib | QPS strata | QPS hnswlib | ratio | CPU QPS strata | CPU QPS hnswlib | ratio |\n")
	fmt.Fprintf(&sb, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	for _, r := range ours {
		l := theirs[r.ef]
		fmt.Fprintf(&sb, "| %d | %.4f | %.4f | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", r.ef, r.recall, l.recall,
			r.qps, l.qps, ratio(r.qps, l.qps), r.cpuQPS, l.cpuQPS, ratio(r.cpuQPS, l.cpuQPS))
	}
	t.Log(sb.String())
}
