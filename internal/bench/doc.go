// Package bench is the logic of `strata bench`: it loads Fashion-MNIST or
// generates a synthetic data set, computes the exact ground truth with the
// distance kernels, builds one vector index (HNSW, IVF_FLAT, IVF_SQ8, IVF_PQ
// or FLAT, an exact scan) and measures build time, index memory, and
// recall@k and queries per second over a sweep of its search parameter (ef
// or nprobe), single-threaded and with every core.
//
// When a Python interpreter with hnswlib (for HNSW) or faiss (for every
// type) is available, the embedded compare.py builds the same index type
// with the same parameters on the same vectors, is scored against the same
// ground truth, and the report prints both side by side with throughput
// ratios. Strata is timed one Search call per query; the libraries one batch
// call per pass, so their numbers carry no per-query Python overhead.
package bench
