//go:build !linux

package hnsw

// adviseHuge does nothing here: transparent huge pages are a Linux feature.
func adviseHuge[T any](s []T) {}
