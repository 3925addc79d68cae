// Package offheap reserves anonymous memory outside the Go heap for data
// that grows in place and is freed explicitly: the fixed-width columns and
// timestamps of a growing segment.
//
// # Why
//
// A column that grows by append on the Go heap is copied whenever it
// outgrows its capacity (each copy leaves the old array as garbage of the
// old size) and carries up to its length again in slack; and every byte of
// it counts towards the collector's heap goal, so with GOGC 100 the process
// may hold about twice the live heap before a collection. A Region instead
// reserves address space once (mmap of anonymous private memory with
// MAP_NORESERVE): the kernel commits a page only when it is first written,
// so a column backed by a Region costs its length rounded up to a page, is
// never copied while it grows within the reservation, and is outside the
// collector's accounting altogether.
//
// # Lifetime
//
// A Region is unmapped by Close, after which any slice into it faults: the
// owner must close it only when no reader can still hold such a slice (a
// segment does so when its last holder releases it, see segment.OnFree).
// Nothing is ever unmapped earlier: a slice that outgrows its Region is
// copied to the Go heap by append as usual, and the Region stays mapped
// until Close.
//
// # Failure
//
// Reserve fails (and the caller keeps its data on the Go heap) when the
// kernel refuses the mapping: strict overcommit (vm.overcommit_memory 2)
// counts reserved space as committed, and the address space or the number
// of mappings (vm.max_map_count) is finite.
package offheap

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by Slice for a closed Region.
var ErrClosed = errors.New("offheap: region closed")

// Region is a reservation of anonymous memory, page-aligned, zeroed, and
// committed page by page as it is written. It is safe for concurrent use;
// the memory itself is not synchronised.
type Region struct {
	mu   sync.Mutex
	mem  []byte // nil once closed
	size int
}

// Reserve maps n bytes (rounded up to whole pages) of anonymous memory.
func Reserve(n int) (*Region, error) {
	if n <= 0 {
		return nil, fmt.Errorf("offheap: reserve %d bytes: size must be positive", n)
	}
	page := unix.Getpagesize()
	n = (n + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("offheap: reserve %d bytes: %w", n, err)
	}
	return &Region{mem: mem, size: n}, nil
}

// Size is the number of bytes reserved.
func (r *Region) Size() int { return r.size }

// Close unmaps the region; it is idempotent. No slice into the region may
// be used afterwards.
func (r *Region) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return nil
	}
	mem := r.mem
	r.mem = nil
	if err := unix.Munmap(mem); err != nil {
		return fmt.Errorf("offheap: unmap %d bytes: %w", len(mem), err)
	}
	return nil
}

// Discard gives back to the kernel (madvise MADV_DONTNEED) the pages of
// the region that lie wholly inside data's capacity, keeping the mapping:
// they no longer count as resident, and reads see zeros, never a fault.
// An owner that replaced data uses it when a reader might still hold a
// slice of it. Slices from SliceAt start on a page, so their pages go
// without touching their neighbours'. It does nothing for data outside
// the region or a closed region.
func Discard[T Plain](r *Region, data []T) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil || cap(data) == 0 {
		return nil
	}
	var zero T
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.mem)))
	from := uintptr(unsafe.Pointer(unsafe.SliceData(data))) - base
	if from >= uintptr(len(r.mem)) {
		return nil // not in the region (a lower address wraps around)
	}
	to := min(from+uintptr(cap(data))*unsafe.Sizeof(zero), uintptr(len(r.mem)))
	page := uintptr(unix.Getpagesize())
	from = (from + page - 1) / page * page
	to = to / page * page
	if from >= to {
		return nil
	}
	if err := unix.Madvise(r.mem[from:to], unix.MADV_DONTNEED); err != nil {
		return fmt.Errorf("offheap: discard %d bytes: %w", to-from, err)
	}
	return nil
}

// Holds reports whether data's first element lies in the region.
func Holds[T any](r *Region, data []T) bool {
	if cap(data) == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.mem)))
	return p >= base && p < base+uintptr(len(r.mem))
}

// Plain lists the element types a Region may hold: fixed-width values
// without pointers, which the Go collector need not scan.
type Plain interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// SliceAt returns an empty slice of T over size bytes of the region from
// offset off, both multiples of the page size, so that one region holds
// several slices that each grow in place (a growing segment's columns) and
// each can be discarded alone.
func SliceAt[T Plain](r *Region, off, size int) ([]T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return nil, ErrClosed
	}
	page := unix.Getpagesize()
	if off < 0 || size <= 0 || off%page != 0 || size%page != 0 || off+size > len(r.mem) {
		return nil, fmt.Errorf("offheap: slice of %d bytes at %d: not whole pages of the region's %d", size, off, len(r.mem))
	}
	var zero T
	mem := r.mem[off : off+size]
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), size/int(unsafe.Sizeof(zero)))[:0], nil
}

// PageSize is the size of the pages regions are made of.
func PageSize() int { return unix.Getpagesize() }

// Slice returns an empty slice of T whose capacity is the whole region
// (Size / sizeof(T) elements): appending to it fills the region in place
// until the capacity is reached, after which append copies to the Go heap
// as for any slice. The region must outlive every use of the slice.
func Slice[T Plain](r *Region) ([]T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem == nil {
		return nil, ErrClosed
	}
	var zero T
	n := len(r.mem) / int(unsafe.Sizeof(zero))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(r.mem))), n)[:0], nil
}
