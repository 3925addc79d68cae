// Package distance implements the vector distance kernels used by the
// indexes: squared Euclidean distance, inner product, norm and cosine
// similarity over float32 vectors, their batched forms, and Hamming and
// Jaccard distances over packed binary vectors.
//
// # Implementations
//
// Every kernel exists as a portable pure-Go reference, exported with a
// Generic suffix (L2SquaredGeneric, DotGeneric, ...). On amd64 the package
// also carries hand-written Plan 9 assembly for two instruction sets:
//
//   - "avx2": AVX2 with FMA3, 8 float32 lanes per register, four independent
//     accumulators to hide FMA latency and a masked load (VMASKMOVPS, which
//     does not fault on masked-out lanes) for the last 0..7 elements.
//   - "avx512": AVX-512F, 16 float32 lanes per register, four accumulators
//     and a masked (zeroing) load for the last 0..15 elements.
//
// The batched kernels (L2SquaredBatch, DotBatch) compare one query with n
// contiguous row-major vectors. The assembly versions walk four rows at a
// time so that each query chunk is loaded once per four rows, and finish the
// remaining rows with the single-vector kernel.
//
// Queries.DotMatrix scores many queries against the same rows at once (the
// many-query FLAT search of package flat, the k-means assignment of package
// ivf). NewQueries packs whole panels of queries coordinate-major (for each
// coordinate, the panel's queries' values), and a GEMM-style panel kernel
// keeps a tile of partial sums with the queries in the register lanes: per
// coordinate it loads the panel's query registers and broadcasts each row's
// value, one FMA per accumulator and no horizontal reduction; the finished
// tile is transposed in registers and stored as consecutive products per
// query. With AVX-512 a panel is 48 queries (three zmm registers) and the
// tile 8 rows × 48 queries in 24 zmm accumulators; with AVX2 a panel is 24
// queries (three ymm registers) and the tile 4 rows × 24 queries in 12 ymm
// accumulators. Both prefetch the next call's rows. The remaining queries
// go through the tile kernel: NewQueries packs them in groups of four whose
// coordinates are interleaved in register-width chunks, and the kernel
// keeps 6 rows × 4 queries in 24 zmm accumulators (3 × 4 in 12 ymm for
// AVX2), reduced horizontally at the end. Queries beyond a multiple of four
// and rows beyond a multiple of a kernel's height go through the batched
// single-query kernel. FirstL2Below tests sixteen L2 keys (||x||² - 2 x·q)
// per step (one AVX-512 or two AVX2 compares) against a top-k threshold.
//
// Sum streams a slice through eight accumulators; on a slice far larger
// than the caches it runs at the core's memory read bandwidth, which
// internal/bench reports as the limit of one-query-at-a-time exact search.
//
// The binary kernels count bits on 64-bit words. The generic form uses
// math/bits.OnesCount64, which the compiler lowers to POPCNT behind a
// run-time feature check unless GOAMD64 is v2 or higher; the check costs
// about a third of the throughput, so amd64 also has assembly: scalar POPCNTQ
// over four words per iteration; an AVX2 nibble lookup (VPSHUFB into a
// 16-entry bit-count table, VPSADBW to sum the bytes) over 32-byte blocks,
// which the "avx2" set uses for operands of at least 512 bytes (Hamming) or
// 128 bytes (Jaccard) and scalar POPCNTQ below, where it is as fast; and
// 512-bit VPOPCNTQ with a byte-masked tail (used by the "avx512" set when the
// CPU has AVX512_VPOPCNTDQ and AVX512BW, else it uses the AVX2 kernels).
//
// # Dispatch
//
// The implementation is chosen once, at package initialisation, from
// golang.org/x/sys/cpu feature bits: AVX-512F first, then AVX2 together with
// FMA, then the generic code. The choice is stored in a single function table
// that is never written again; Impl reports its name. Building with the
// noasm tag, or for any architecture other than amd64, always selects the
// generic code.
//
// # Files
//
// distance.go holds the API, generic.go the reference kernels, half.go the
// float16, bfloat16 and int8 conversions to and from float32 (the
// Float16Vector, BFloat16Vector and Int8Vector fields are decoded with them
// before the float32 kernels run; the vector decoders are dispatched like
// the kernels: VCVTPH2PS where the CPU has F16C, which golang.org/x/sys/cpu
// does not report and half_amd64.s reads with CPUID, and AVX2 zero and sign
// extension for bfloat16 and int8),
// dispatch_amd64.go the CPU dispatch for the assembly in avx2_amd64.s,
// avx512_amd64.s, binary_amd64.s, binary_avx2_amd64.s and half_amd64.s, and
// dispatch_stub.go the dispatch for noasm builds and other architectures.
// matrix.go holds Sum, Queries and their references, with its own dispatch
// in matrix_amd64.go (assembly in matrix_avx512_amd64.s,
// matrix_avx2_amd64.s, matrix_panel_avx512_amd64.s,
// matrix_panel_avx2_amd64.s, stream_avx512_amd64.s and stream_avx2_amd64.s)
// and matrix_stub.go. Prefetch (prefetch_amd64.s, a no-op in prefetch_stub.go)
// hints the CPU to load a slice; the AVX2 batched kernels also prefetch the
// rows 4 KiB ahead of the ones they score, which the hardware prefetcher
// alone does not keep up with on a one-query scan of rows far larger than
// the caches.
//
// # Contracts
//
// The float32 pairwise kernels and Hamming/Jaccard require operands of equal
// length and panic otherwise, since a mismatch is a programming error that
// would otherwise read out of bounds in assembly. Results of different
// implementations may differ in the last bits, because they sum in different
// orders; tests hold them to a relative tolerance of 1e-5 of the reference.
package distance
