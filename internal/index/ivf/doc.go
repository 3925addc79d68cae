// Package ivf implements the inverted-file vector indexes of Milvus over
// float32 vectors for the L2, IP and COSINE metrics: IVF_FLAT, IVF_SQ8 and
// IVF_PQ. One type, Index, implements index.Index for all three; Config.Kind
// selects how the vectors in the lists are stored.
//
// # Build
//
// Build draws a random sample of at most MaxPointsPerCentroid*Nlist rows
// (256*Nlist by default) and clusters it into Nlist centroids with k-means
// under squared L2:
//
//   - Seeding: k-means++ (D² sampling) over a uniform sample of at most 8
//     training rows per centroid, where each round skips the rows that the
//     triangle inequality shows cannot come closer to the new centroid; or
//     random distinct training rows (Config.Init).
//   - Lloyd iterations over every training row, at most Config.Iterations
//     (20 by default). Each iteration assigns every row to its nearest
//     centroid and moves every centroid to the mean of its rows (float64
//     sums in row order). The iterations stop early once an assignment moves
//     at most 2 % of the rows to another cluster and leaves no cluster
//     empty: on 100,000 × 128 rows and 1,024 lists that is after 7–8
//     iterations, with recall above faiss's (faiss, which Milvus runs,
//     stops after a fixed 10 iterations from random seeds).
//   - An empty cluster takes over half of a large one (its centroid is
//     copied and the two are nudged apart), as faiss does.
//   - The assignment that ends the run is also returned: under L2, when the
//     sample is every row, it gives the rows' lists, and Build does not
//     assign them again.
//
// The assignment steps are blocked like a matrix product: 48 rows at a
// time are the queries of one distance.Queries.DotMatrix call against every
// centroid (the rows stay in L1, each centroid value loaded serves 48 rows),
// and each row takes the centroid with the least ||c||² - 2<x, c> (an AVX2
// argmin, sixteen keys per step, in kernels_amd64.s). A k-means run packs its
// rows into the kernel's panels once for all its passes (up to 256 MiB of
// rows; the packed copy is as large). k-means++ collects the rows of a chunk
// that the triangle inequality cannot rule out and prefetches each
// candidate's vector a few candidates ahead (distance.Prefetch). The product
// quantizers' codebooks (and KMeans) are trained the same way from random
// seeds, stopping early only once no row moves, which gives exactly the
// centroids of all the iterations.
//
// Every row then joins one list: the centroid nearest by L2, or for IP and
// COSINE the one with the largest inner product, which is also how Search
// ranks lists. Rows are grouped by list with a counting sort, keeping row
// order within a list. Assignment and encoding run on Config.Workers
// goroutines, which Build starts and joins; each row's result is independent
// of the others and every reduction is serial, so an index depends only on
// the data and Config (Seed included), never on Workers.
//
// Build takes a context, checked before every chunk of a parallel pass,
// every k-means iteration and seeding step, and between phases: a
// cancelled build (a shutdown) returns ctx.Err() soon after.
//
// COSINE normalises the stored vectors and the query to unit length and
// searches by inner product. Internally distances are "smaller is better"
// (L2 squared, or the negated inner product); Search converts them back to
// Milvus scores.
//
// # Encodings
//
//   - IVF_FLAT keeps the float32 vectors; scores are exact, so probing all
//     lists is a brute-force search.
//   - IVF_SQ8 keeps one byte per dimension: code = round((x-min)/scale) with
//     the per-dimension minimum and scale = (max-min)/255 taken from the
//     training sample (values outside are clamped). A search scores the
//     codes directly, without decoding them to float32: under L2 it
//     prepares q' = q - min once and sums (q'[j] - scale[j]*code[j])^2;
//     under IP the score is <q, min> + sum (q[j]*scale[j])*code[j]. About
//     1/4 of the raw size.
//   - IVF_PQ splits each row's residual (vector minus its list's centroid)
//     into M sub-vectors of dim/M floats and stores, per sub-vector, the
//     index of the nearest of 2^Nbits codewords (one byte each; Nbits <= 8).
//     The codebooks are trained by k-means on the residuals of a sample of at
//     most MaxPointsPerCentroid*2^Nbits rows. A search scores rows by
//     asymmetric distance: the query stays exact, and a row's distance is the
//     sum of M look-ups in a table of query-to-codeword distances. Under IP
//     the table is built once per query and offset by the list centroid's
//     inner product. Under L2 the distance splits into ||q-c||^2 (the
//     coarse distance), a list term sum_j ||r_j||^2 + 2<c_j, r_j> and a
//     query term -2 sum_j <q_j, r_j>, as in faiss: the list terms of every
//     list are precomputed (Nlist*M*2^Nbits floats, derived at Build and
//     Unmarshal, never serialized) when they take at most 1/8 of the raw
//     vectors and PQMaxPrecomputedBytes, so a probed list's table is one
//     vector addition; otherwise it is built per probed list from the
//     query's residual. With M = dim/8 and 8 bits the codes and row numbers
//     are about 1/15 of the raw vectors (8 code bytes and a 4-byte row
//     number per 4*dim bytes).
//
// # Search
//
// Search ranks the centroids against the query (one batched kernel call),
// scans the Nprobe best lists and keeps the k best allowed rows in a bounded
// heap. A list is scored by one batched kernel call over its contiguous rows
// (over each run of consecutive allowed rows when a filter is given, so rows
// the mask excludes are not scored), and each score is first compared with
// the heap's current k-th best, so most rows cost no push.
//
// # Kernels
//
// The list-scan kernels (kernels.go) have pure-Go references and, on amd64,
// assembly (kernels_amd64.s), picked once at initialisation from the CPU
// features (AVX-512F, else AVX2 with FMA, else Go); the noasm build tag
// selects the references. The SQ8 row kernels convert 16 (AVX-512) or 8
// (AVX2) code bytes to float32 lanes per step and score four rows at a
// time. The IVF_PQ query tables come from codebooks kept transposed per
// sub-space (dimension-major, derived at Build and Unmarshal, not
// serialized), so a sub-space's 2^Nbits inner products are dsub scaled
// additions of contiguous rows (pqInner). The 8-bit IVF_PQ look-up loop
// runs over blocks of 16 sub-spaces, so that the 16 KiB of tables a block
// uses stay in the L1 cache while every row of the list looks them up, and
// is scalar assembly over two rows at a time, four partial sums per row,
// bit-identical to its Go reference (an AVX-512 gather version measured
// slower); the per-list table addition is
// vectorised. The IVF_FLAT scans use the batched kernels of package
// distance, and prefetch the first 4 KiB of the next probed list while
// scanning the current one. A filter that admits at
// most Len()*Nprobe/Nlist rows makes the search scan every list instead:
// that costs no more distance computations than an unfiltered search and is
// exact. If the probed lists still hold fewer than k allowed rows, the next
// lists in rank order are scanned until there are k, so a search returns k
// hits whenever k rows are allowed. Searches draw their scratch memory from
// a sync.Pool and allocate only the result slice.
//
// # Concurrency
//
// An Index is immutable after Build or Unmarshal; every method is safe for
// concurrent use.
//
// # Serialized format
//
// Marshal writes a versioned little-endian format in the envelope of package
// indexfile (magic, version, payload, CRC-32C); the layout is documented
// next to Marshal in marshal.go and pinned by the golden files in testdata. Unmarshal checks the
// checksum, the parameters and that the lists hold every row exactly once,
// and wraps ErrCorrupt for malformed input.
package ivf
