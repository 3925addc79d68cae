package distance

// kernels is one implementation of every kernel. name identifies the float32
// kernels and binName the binary ones, which are chosen by separate CPU
// features. The pairwise entries assume operands of equal length; the batched
// entries assume shapes already validated by checkBatch with a non-zero
// dimension.
type kernels struct {
	name     string
	binName  string // which binary kernels: "vpopcntq", "vpshufb", "popcnt" or "generic"
	l2       func(a, b []float32) float32
	dot      func(a, b []float32) float32
	l2Batch  func(q, data, out []float32)
	dotBatch func(q, data, out []float32)
	hamming  func(a, b []byte) int
	jaccard  func(a, b []byte) float32
	// hammingBatch is HammingBatch for shapes already checked, len(q) > 0.
	hammingBatch func(q, data []byte, out []float32)
	// decodeF16, decodeBF16 and decodeI8 widen float16, bfloat16 and int8
	// values to float32; shapes are already checked.
	decodeF16  func(dst []float32, src []byte)
	decodeBF16 func(dst []float32, src []byte)
	decodeI8   func(dst []float32, src []byte)
}

// genericKernels is the portable implementation, available everywhere.
func genericKernels() kernels {
	return kernels{
		name:     "generic",
		l2:       L2SquaredGeneric,
		dot:      DotGeneric,
		l2Batch:  L2SquaredBatchGeneric,
		dotBatch: DotBatchGeneric,
		binName:  "generic",
		hamming:  HammingGeneric,
		jaccard:  JaccardGeneric,

		hammingBatch: func(q, data []byte, out []float32) { hammingLoop(HammingGeneric, q, data, out) },

		decodeF16:  DecodeFloat16Generic,
		decodeBF16: DecodeBFloat16Generic,
		decodeI8:   DecodeInt8Generic,
	}
}

// impl is the CPU-dispatch table. It is written once, during package
// initialisation, by the architecture-specific selectKernels, and only read
// afterwards.
var impl = selectKernels()

// Impl names the float32 kernel implementation selected for this CPU:
// "avx512", "avx2" or "generic". The binary kernels of the "avx512" set use
// VPOPCNTQ where the CPU has AVX512_VPOPCNTDQ and AVX512BW and the AVX2 ones
// otherwise; those of the "avx2" set use a VPSHUFB nibble lookup for long
// operands and scalar POPCNT for short ones.
func Impl() string { return impl.name }

// L2Squared returns the squared Euclidean distance sum((a[i]-b[i])^2).
// It panics if len(a) != len(b).
func L2Squared(a, b []float32) float32 {
	checkLen(len(a), len(b))
	return impl.l2(a, b)
}

// Dot returns the inner product sum(a[i]*b[i]).
// It panics if len(a) != len(b).
func Dot(a, b []float32) float32 {
	checkLen(len(a), len(b))
	return impl.dot(a, b)
}

// Norm returns the Euclidean norm sqrt(Dot(a, a)).
func Norm(a []float32) float32 {
	return sqrt32(impl.dot(a, a))
}

// Cosine returns the cosine similarity Dot(a, b) / (Norm(a) * Norm(b)), or 0
// when either norm is 0. It panics if len(a) != len(b).
func Cosine(a, b []float32) float32 {
	checkLen(len(a), len(b))
	return cosine(impl.dot(a, b), impl.dot(a, a), impl.dot(b, b))
}

// L2SquaredBatch computes, for a query q of dimension len(q) and data holding
// len(out) row-major vectors of that dimension, out[i] = L2Squared(q, row i).
// It panics unless len(data) == len(q)*len(out). Results may differ from
// L2Squared in the last bits because the batched kernels sum in another order.
func L2SquaredBatch(q, data, out []float32) {
	if checkBatch(len(q), len(data), len(out)) == 0 {
		clear(out)
		return
	}
	impl.l2Batch(q, data, out)
}

// DotBatch computes, for a query q of dimension len(q) and data holding
// len(out) row-major vectors of that dimension, out[i] = Dot(q, row i).
// It panics unless len(data) == len(q)*len(out). Results may differ from Dot
// in the last bits because the batched kernels sum in another order.
func DotBatch(q, data, out []float32) {
	if checkBatch(len(q), len(data), len(out)) == 0 {
		clear(out)
		return
	}
	impl.dotBatch(q, data, out)
}

// Hamming returns the number of differing bits between a and b,
// popcount(a XOR b). It panics if len(a) != len(b).
func Hamming(a, b []byte) int {
	checkLen(len(a), len(b))
	return impl.hamming(a, b)
}

// Jaccard returns the Jaccard distance 1 - |a AND b| / |a OR b| over the bits
// of a and b, or 0 when neither has a bit set. It panics if len(a) != len(b).
func Jaccard(a, b []byte) float32 {
	checkLen(len(a), len(b))
	return impl.jaccard(a, b)
}

// HammingBatch computes, for a packed query q and data holding len(out)
// contiguous rows of len(q) bytes, out[i] = Hamming(q, row i). It panics
// unless len(data) == len(q)*len(out).
func HammingBatch(q, data []byte, out []float32) {
	w := checkBatch(len(q), len(data), len(out))
	if w == 0 {
		clear(out)
		return
	}
	impl.hammingBatch(q, data, out)
}

// hammingLoop is a batch Hamming over a pairwise kernel.
func hammingLoop(h func(a, b []byte) int, q, data []byte, out []float32) {
	w := len(q)
	for i := range out {
		out[i] = float32(h(q, data[i*w:(i+1)*w]))
	}
}

// JaccardBatch computes, for a packed query q and data holding len(out)
// contiguous rows of len(q) bytes, out[i] = Jaccard(q, row i). It panics
// unless len(data) == len(q)*len(out).
func JaccardBatch(q, data []byte, out []float32) {
	w := checkBatch(len(q), len(data), len(out))
	if w == 0 {
		clear(out)
		return
	}
	j := impl.jaccard
	for i := range out {
		out[i] = j(q, data[i*w:(i+1)*w])
	}
}
