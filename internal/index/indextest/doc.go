// Package indextest holds the test helpers shared by the index packages:
// random data, a brute-force reference top k, recall@k, the hit order
// check, golden-file comparison, a checker that every truncation and every
// flipped byte of a marshalled index is rejected as corrupt, and Marshal
// and Unmarshal benchmarks. It is imported by tests only.
package indextest
