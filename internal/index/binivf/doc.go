// Package binivf implements BIN_IVF_FLAT, the inverted-file index over
// packed binary vectors (Milvus BinaryVector fields) for the HAMMING and
// JACCARD metrics.
//
// # Build
//
// The coarse quantizer is trained by k-majority clustering, the binary
// analogue of k-means: centroids start as distinct random rows of a sample
// of at most 256 rows per list, each iteration assigns every sample row to
// its nearest centroid under the index metric and sets each centroid bit to
// the majority bit of its members (a tie keeps the old bit), and an empty
// list takes a random sample row. Every row then joins the list of its
// nearest centroid (ties to the lower list number). The index keeps the
// rows' bytes in list order, so it costs about the size of the column plus
// 4 bytes a row.
//
// # Search
//
// A search ranks the lists by the metric between the query and their
// centroids, scans the nprobe best lists exactly, and goes on to the next
// lists while it has fewer than k allowed hits, as the float IVF indexes do.
// A filter that allows at most n*nprobe/nlist rows scans every list.
//
// # Format
//
// Marshal writes version 1 in the envelope of package indexfile (magic,
// version, payload, CRC-32C); all integers are little-endian.
//
//	offset  size  field
//	0       8     magic "STRBIVF\x00"
//	8       4     version (1)
//	12      4     metric (3 HAMMING, 4 JACCARD: index.Metric)
//	16      4     dim, in bits (a multiple of 8)
//	20      4     nlist
//	24      8     seed
//	32      8     n, the number of rows
//	40      nlist*dim/8   centroids, packed like the rows
//	...     4*(nlist+1)   list offsets: list l holds positions
//	                      offsets[l] .. offsets[l+1]-1
//	...     4*n           row number of each position
//	...     n*dim/8       row vectors in position order
//	...     4     CRC-32C (Castagnoli) of every preceding byte
package binivf
