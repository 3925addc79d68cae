// Package rabitq implements Milvus's IVF_RABITQ: an inverted-file index
// whose lists hold one bit per dimension per row, scored with the RaBitQ
// estimator (Gao and Long, SIGMOD 2024), with an optional refine store
// (package quant) that re-ranks the best candidates. It implements
// index.Index for the L2, IP and COSINE metrics.
//
// # Build
//
// Build clusters a sample of at most 256*Nlist rows into Nlist centroids
// (ivf.KMeans) and puts every row in the list of its nearest centroid by
// L2. A row x of list c is stored as its residual r = x - c: the norm |r|,
// the sign bits of P·r/|r| (P a random orthogonal rotation drawn from
// Config.Seed by Gram-Schmidt, stored in the file) and the correction
// <ō, P·o> = sum_j |(P·o)_j| / sqrt(dim), o = r/|r|, ō the unit vector of
// signs. COSINE normalises the rows (and queries) and scores by inner
// product. The dense rotation costs dim² floats per index file (64 KiB at
// 128 dimensions, 9 MiB at 1,536) and O(dim³) to draw; a structured one
// (random signs and a Hadamard transform) would make both linear.
//
// # Search
//
// The query is rotated once; lists are ranked by L2 to their centroid (by
// inner product under IP and COSINE) and the Nprobe best scanned, more if
// they hold fewer than k allowed rows. For a list, u = P(q - c) is
// optionally quantized to rbq_bits_query bits, and a
// table of the sums of u over every byte value of every code byte is built
// (dim/8 × 256 floats), so a row costs dim/8 look-ups. The estimator
// <o, u> ≈ <ō, u> / <ō, P·o>, with <ō, u> = (2·sum_{bit j set} u_j -
// sum_j u_j)/sqrt(dim), gives ||q - x||^2 ≈ |r|^2 + ||q - c||^2 -
// 2|r|<o, u> and <q, x> ≈ <q, c> + <c, r> + |r|<o, u> (<c, r> stored
// exactly per row, so the estimate's error scales with ||q - c|| under
// every metric). With a refine store the best
// ceil(k·refine_k) rows by estimate are re-scored with it (exactly with
// FP32); without one the scores are the estimates.
//
// # Serialized format, version 1
//
// All integers and floats are little-endian; the magic, version and CRC are
// the envelope of package indexfile.
//
//	offset  size             field
//	0       8                magic "STRRABQ\x00"
//	8       4                version (1)
//	12      4                metric (0 L2, 1 IP, 2 COSINE)
//	16      4                dim
//	20      4                nlist
//	24      1                refine encoding (0 FP32, 1 SQ8, 2 SQ6, 3 FP16,
//	                         4 BF16; 255 no refine store)
//	25      7                reserved, 0
//	32      8                seed
//	40      8                n, the number of rows
//	48      4*dim*dim        rotation P, row-major float32
//	...     4*nlist*dim      centroids (float32)
//	...     4*(nlist+1)      list boundaries: list l holds slots
//	                         [offs[l], offs[l+1]) (int32)
//	...     4*n              row of each slot (int32)
//	...     4*n              |r| of each slot (float32)
//	...     4*n              correction <ō, P·o> of each slot (float32, > 0)
//	...     4*n              <c, r> of each slot (float32)
//	...     n*ceil(dim/8)    sign bits of each slot, bit j of byte j/8 at
//	                         position j%8 set when (P·o)_j > 0
//	...                      the refine store, by row, in package quant's
//	                         layout (Store.Write), when present
//	...     4                CRC-32C (Castagnoli) of every preceding byte
//
// The rotated centroids are derived at Build and Unmarshal, not stored.
// Unmarshal checks the checksum, the parameters, that the lists hold every
// row exactly once and that every correction is positive, and wraps
// ErrCorrupt for malformed input.
package rabitq
