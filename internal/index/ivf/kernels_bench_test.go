package ivf

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPQScan8 times the 8-bit look-up scan of one Fashion-MNIST-sized
// list (470 rows, m = 98 sub-spaces: a 98 KiB table) with each available
// implementation, and the blocked pqScan that Search runs.
func BenchmarkPQScan8(b *testing.B) {
	const m, rows = 98, 470
	rng := rand.New(rand.NewPCG(1, 2))
	tab := make([]float32, m*256)
	for i := range tab {
		tab[i] = rng.Float32()
	}
	codes := make([]byte, rows*m)
	for i := range codes {
		codes[i] = byte(rng.UintN(256))
	}
	out := make([]float32, rows)
	for _, k := range availableScanKernels() {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.pqScan8(tab, codes, m, m, out)
			}
		})
	}
	b.Run("blocked", func(b *testing.B) {
		for b.Loop() {
			pqScan(tab, 256, codes, m, 0, out)
		}
	})
}
