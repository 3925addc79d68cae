//go:build bench

package binivf

// BIN_IVF_FLAT on binarised Fashion-MNIST (a pixel is 1 when it is at least
// 128): 60,000 base and 1,000 query images of 784 bits. Behind the "bench"
// build tag because it needs the data set (Debian package
// dataset-fashion-mnist):
//
//	go test -tags bench -run TestFashionMNISTBinary -v ./internal/index/binivf/ \
//	    -fmnist=/usr/share/datasets/fashion-mnist
//
// It prints the build time and, per nprobe, the tie-aware recall@10 (a hit
// counts when its distance is at most the true 10th distance; binary
// distances tie often) and single-thread QPS.

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/bench"
	"github.com/strata-db/strata/internal/index"
)

var fmnistDir = flag.String("fmnist", "/usr/share/datasets/fashion-mnist", "directory with the Fashion-MNIST idx .gz files")

// binarise packs rows of 0..255 pixels into bits, 1 when a pixel >= 128.
func binarise(pix []float32, dim int) []byte {
	out := make([]byte, len(pix)/8)
	for i, p := range pix {
		if p >= 128 {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

func TestFashionMNISTBinary(t *testing.T) {
	ds, err := bench.LoadFashionMNIST(*fmnistDir, 1000)
	require.NoError(t, err)
	dim, w := ds.Dim, ds.Dim/8
	base, queries := binarise(ds.Base, dim), binarise(ds.Queries, dim)
	nq := len(queries) / w
	for _, m := range []index.Metric{index.Hamming, index.Jaccard} {
		start := time.Now()
		x, err := Build(context.Background(), base, dim, m, Config{Nlist: 256, Seed: 1})
		require.NoError(t, err)
		t.Logf("%s: built nlist 256 over %d rows in %v, %.1f MB", m, x.Len(), time.Since(start).Round(time.Millisecond),
			float64(x.MemoryBytes())/1e6)
		kth := make([]float32, nq)
		for q := range nq {
			kth[q] = exact(base, queries[q*w:(q+1)*w], 10, m, nil)[9].Score
		}
		for _, nprobe := range []int{1, 4, 8, 16, 32, 64} {
			hits := 0
			start := time.Now()
			for q := range nq {
				got, err := x.SearchBinary(queries[q*w:(q+1)*w], 10, index.SearchParams{Nprobe: nprobe}, nil)
				require.NoError(t, err)
				for _, h := range got {
					if h.Score <= kth[q] {
						hits++
					}
				}
			}
			qps := float64(nq) / time.Since(start).Seconds()
			fmt.Printf("%-8s nprobe=%-3d recall@10=%.3f QPS(1 thread)=%.0f\n", m, nprobe, float64(hits)/float64(10*nq), qps)
		}
	}
}
