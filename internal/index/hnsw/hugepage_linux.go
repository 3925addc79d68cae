package hnsw

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms Strata
// runs on (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the 2 MiB-aligned part of s with
// transparent huge pages (MADV_HUGEPAGE; khugepaged then collapses the
// pages already there in the background). A graph
// walk reads vectors and link blocks at random across arrays of hundreds
// of megabytes; with 4 KiB pages nearly every read also misses the TLB
// (a page walk per vector), with 2 MiB pages the TLB covers the arrays.
// It is a hint: errors (an older kernel, THP disabled, no free huge page)
// change nothing. It does not ask for MADV_COLLAPSE: collapsing
// synchronously copies the array, 0.6-0.9 s per 100 MB on the 2-core
// machine, which would add seconds to loading a large segment.
func adviseHuge[T any](s []T) {
	if len(s) == 0 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	skip, n := hugeSpan(uintptr(base), uintptr(len(s))*unsafe.Sizeof(s[0]))
	if n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(base, skip)), n)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}

// hugeSpan returns the whole huge pages inside the size bytes at addr, as
// an offset from addr and a length (0 when there are fewer than two: a
// small array gains nothing).
func hugeSpan(addr, size uintptr) (skip, n uintptr) {
	if size < 2*hugePage {
		return 0, 0
	}
	skip = (hugePage - addr%hugePage) % hugePage
	if skip >= size {
		return 0, 0
	}
	return skip, (size - skip) &^ (hugePage - 1)
}
