package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-db/strata/internal/metastore"
)

// Damage is one thing wrong with a meta-store file, as Verify and a refused
// Open report it.
type Damage struct {
	// Page is the bbolt page the damage is on, or -1 when it is not tied to
	// one page (a value's checksum, the file's length).
	Page int64
	// Bucket is the bbolt bucket involved ("kv" holds the metastore keys),
	// or "" for the file's own structure.
	Bucket string
	// Key is the key involved (a metastore key in bucket "kv"), or "".
	Key string
	// Problem says what is wrong.
	Problem string
}

// String describes the damage in one line.
func (d Damage) String() string {
	var b strings.Builder
	if d.Page >= 0 {
		fmt.Fprintf(&b, "page %d: ", d.Page)
	}
	if d.Bucket != "" {
		fmt.Fprintf(&b, "bucket %q: ", d.Bucket)
	}
	if d.Key != "" {
		fmt.Fprintf(&b, "key %q: ", d.Key)
	}
	b.WriteString(d.Problem)
	return b.String()
}

// CorruptError reports damage found in a meta-store file. It wraps
// metastore.ErrCorrupt.
type CorruptError struct {
	// Path is the file.
	Path string
	// Damage lists what is wrong (at least one entry).
	Damage []Damage

	fromPanic bool // bbolt panicked: the open store must not be used further
	atOpen    bool // Open refused the file
}

// maxListedDamage bounds how many damages a CorruptError message spells out.
const maxListedDamage = 5

// Error names the file and what is damaged.
func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "metastore/embedded: %s is damaged: ", e.Path)
	for i, d := range e.Damage {
		if i == maxListedDamage {
			fmt.Fprintf(&b, "; and %d more", len(e.Damage)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d.String())
	}
	if e.atOpen {
		b.WriteString(" (refusing to open it; nothing was repaired or deleted)")
	}
	return b.String()
}

// Unwrap returns metastore.ErrCorrupt.
func (e *CorruptError) Unwrap() error { return metastore.ErrCorrupt }

// Verify checks the meta-store file at path without changing it: it opens
// the file read-only under a shared lock (it fails if a server holds the
// file), checks bbolt's meta pages, freelist and every page reachable from
// the root (types, bounds, layout, key order, each page used once, every
// page either used or free), and every value's checksum. It returns each
// damage found; an empty list means the file is sound. A legacy file (one
// written before values were checksummed, see doc.go) gets the structural
// checks only. The error is for what prevented the check (a missing file, a
// lock held by a running server).
func Verify(path string) ([]Damage, error) {
	rep, _, err := inspectFile(path, false)
	if err != nil {
		return nil, err
	}
	return rep.damage, nil
}

// inspectFile checks the file at path (see Verify) under a flock, exclusive
// or shared, waiting at most lockTimeout for it; the lock is released before
// it returns. It reads the file through a read-only mapping of the part
// that holds pages (bbolt grows the file ahead of use, and the pages past
// the meta page's high-water mark are never read).
func inspectFile(path string, exclusive bool) (rep report, size int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return report{}, 0, fmt.Errorf("metastore/embedded: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only; nothing to flush
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	deadline := time.Now().Add(lockTimeout)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return report{}, 0, fmt.Errorf("metastore/embedded: lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			return report{}, 0, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	info, err := f.Stat()
	if err != nil {
		return report{}, 0, fmt.Errorf("metastore/embedded: %w", err)
	}
	if info.IsDir() {
		return report{}, 0, fmt.Errorf("metastore/embedded: %s is a directory", path)
	}
	if info.Size() == 0 {
		return inspect(nil), 0, nil
	}
	n, err := imageSize(f, info.Size())
	if err != nil {
		return report{}, 0, fmt.Errorf("metastore/embedded: read %s: %w", path, err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return report{}, 0, fmt.Errorf("metastore/embedded: map %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, unix.Munmap(data)) }()
	// A fault on the mapping (the file shrunk under the lock by something
	// that ignores it) becomes a panic, reported as damage.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			rep = report{damage: []Damage{{Page: -1, Problem: fmt.Sprintf("reading the file failed: %v", r)}}}
		}
	}()
	return inspect(data), len(data), nil
}

// headSize is how much of the file imageSize reads to find the meta pages
// (both fit for every page size up to 64 KiB).
const headSize = 2*65536 + pageHeaderSize + metaSize

// imageSize returns how much of the file holds pages: up to the high-water
// mark of the meta page in use, or the whole file when the meta pages
// cannot be decoded (inspect reports why).
func imageSize(f *os.File, size int64) (int64, error) {
	head := make([]byte, min(size, headSize))
	if _, err := f.ReadAt(head, 0); err != nil {
		return 0, err
	}
	probe := &inspector{data: head, free: map[uint64]bool{}, used: map[uint64]bool{}}
	if m, ok := probe.metas(); ok && len(probe.rep.damage) == 0 {
		if end := m.pgid * uint64(m.pageSize); end/uint64(m.pageSize) == m.pgid && end < uint64(size) {
			return int64(end), nil
		}
	}
	return size, nil
}

// The bbolt v2 on-disk layout, as written by go.etcd.io/bbolt (little-endian
// on every platform Strata builds for).
const (
	pageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	elementSize    = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	metaSize       = 64 // magic, version, pageSize, flags u32; root, sequence, freelist, pgid, txid, checksum u64
	inBucketSize   = 16 // root pgid u64, sequence u64

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	metaPageFlag     = 0x04
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
	noFreelist  = ^uint64(0)

	maxDamage = 100 // stop listing after this many
	maxDepth  = 64  // deeper trees mean a reference cycle or garbage
)

// The buckets of a Strata meta-store file.
var (
	formatBucket = []byte("strata")
	formatKey    = []byte("format")
)

// report is what inspect found.
type report struct {
	damage []Damage
	legacy bool // no format record: values are stored without the envelope
	fresh  bool // no bucket at all: a file bbolt just initialised
}

// boltMeta is one decoded meta page.
type boltMeta struct {
	pageSize uint32
	root     uint64
	rootSeq  uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// entry is one element of a decoded branch or leaf page.
type entry struct {
	flags uint32
	key   []byte
	value []byte // leaf only
	child uint64 // branch only
}

// inspector walks one file image.
type inspector struct {
	data     []byte
	pageSize uint64
	hwm      uint64 // pages [0, hwm) are in use or free
	free     map[uint64]bool
	used     map[uint64]bool
	rep      report

	badValues []entry // kv bucket entries whose envelope fails; damage unless the file is legacy
	sawFormat bool
	sawKV     bool
}

// inspect checks one file image; see Verify.
func inspect(data []byte) report {
	in := &inspector{data: data, free: map[uint64]bool{}, used: map[uint64]bool{}}
	in.run()
	return in.rep
}

func (in *inspector) damage(page int64, bucket, key, format string, args ...any) {
	if len(in.rep.damage) == maxDamage {
		in.rep.damage = append(in.rep.damage, Damage{Page: -1, Problem: "too many damages; listing stopped"})
	}
	if len(in.rep.damage) > maxDamage {
		return
	}
	in.rep.damage = append(in.rep.damage, Damage{Page: page, Bucket: bucket, Key: key, Problem: fmt.Sprintf(format, args...)})
}

func (in *inspector) run() {
	if len(in.data) == 0 {
		in.damage(-1, "", "", "file is empty (truncated?)")
		return
	}
	m, ok := in.metas()
	if !ok {
		return
	}
	in.pageSize, in.hwm = uint64(m.pageSize), m.pgid
	if size := uint64(len(in.data)); in.hwm > size/in.pageSize {
		in.damage(-1, "", "", "file is truncated: %d bytes hold %d pages of %d bytes, the meta page says %d pages are in use",
			size, size/in.pageSize, in.pageSize, in.hwm)
		return
	}
	in.used[0], in.used[1] = true, true
	if m.rootSeq != 0 {
		in.damage(-1, "", "", "the root bucket has sequence %d, want 0", m.rootSeq)
	}
	if m.freelist != noFreelist {
		in.freelist(m.freelist)
	}
	in.bucket("", m.root, nil, 0)
	if m.freelist != noFreelist {
		for id := uint64(2); id < in.hwm; id++ {
			if !in.used[id] && !in.free[id] {
				in.damage(int64(id), "", "", "page is neither reachable nor in the freelist")
			}
		}
	}
	if in.sawFormat && !in.sawKV {
		in.damage(-1, "", "", "bucket %q is missing (the format record says the file holds one)", bucketName)
	}
	in.rep.fresh = !in.sawKV && !in.sawFormat
	in.rep.legacy = !in.sawFormat
	if !in.sawFormat {
		return // legacy: values carry no checksum
	}
	for _, e := range in.badValues {
		_, problem := unseal(e.key, e.value)
		in.damage(-1, string(bucketName), string(e.key), "%s", problem)
	}
}

// metas decodes both meta pages and returns the newer valid one. Any invalid
// meta page is damage: bbolt writes the 64-byte meta within one sector after
// the data it points to is synced, so a bad meta page is not a torn write.
func (in *inspector) metas() (boltMeta, bool) {
	m0, p0 := in.meta(0, 0)
	sizes := []uint32{uint32(os.Getpagesize()), 4096, 16384, 65536}
	if p0 == "" {
		sizes = []uint32{m0.pageSize}
	}
	var m1 boltMeta
	p1 := "meta page 1 not found"
	for _, ps := range sizes {
		if m1, p1 = in.meta(1, uint64(ps)); p1 == "" {
			break
		}
	}
	if p0 != "" {
		in.damage(0, "", "", "%s", p0)
	}
	if p1 != "" {
		in.damage(1, "", "", "%s", p1)
	}
	switch {
	case p0 != "" && p1 != "":
		return boltMeta{}, false
	case p0 != "":
		return m1, true
	case p1 != "":
		return m0, true
	case m1.txid > m0.txid:
		return m1, true
	default:
		return m0, true
	}
}

// meta decodes the meta page with the given id at byte offset off.
func (in *inspector) meta(id, off uint64) (boltMeta, string) {
	if uint64(len(in.data)) < off+pageHeaderSize+metaSize {
		return boltMeta{}, fmt.Sprintf("meta page missing: file has %d bytes (truncated?)", len(in.data))
	}
	h := in.data[off:]
	if flags := binary.LittleEndian.Uint16(h[8:]); flags != metaPageFlag {
		return boltMeta{}, fmt.Sprintf("meta page has page flags %#x, want %#x", flags, metaPageFlag)
	}
	if got := binary.LittleEndian.Uint64(h); got != id {
		return boltMeta{}, fmt.Sprintf("meta page header names page %d", got)
	}
	b := h[pageHeaderSize : pageHeaderSize+metaSize]
	le := binary.LittleEndian
	if magic := le.Uint32(b); magic != boltMagic {
		return boltMeta{}, fmt.Sprintf("meta page has magic %#x, want %#x (not a bbolt file?)", magic, boltMagic)
	}
	sum := fnv.New64a()
	_, _ = sum.Write(b[:56])
	if want := le.Uint64(b[56:]); sum.Sum64() != want {
		return boltMeta{}, fmt.Sprintf("meta page checksum mismatch: stored %016x, computed %016x", want, sum.Sum64())
	}
	if v := le.Uint32(b[4:]); v != boltVersion {
		return boltMeta{}, fmt.Sprintf("meta page has bbolt format version %d, want %d", v, boltVersion)
	}
	m := boltMeta{pageSize: le.Uint32(b[8:]), root: le.Uint64(b[16:]), rootSeq: le.Uint64(b[24:]), freelist: le.Uint64(b[32:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}
	switch {
	case m.pageSize < 512 || m.pageSize&(m.pageSize-1) != 0:
		return boltMeta{}, fmt.Sprintf("meta page has page size %d", m.pageSize)
	case off != 0 && off != uint64(m.pageSize):
		return boltMeta{}, fmt.Sprintf("meta page 1 found at offset %d but says the page size is %d", off, m.pageSize)
	case m.pgid < 4:
		return boltMeta{}, fmt.Sprintf("meta page says %d pages are in use", m.pgid)
	case m.root < 2 || m.root >= m.pgid:
		return boltMeta{}, fmt.Sprintf("meta page has root bucket page %d outside [2, %d)", m.root, m.pgid)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid):
		return boltMeta{}, fmt.Sprintf("meta page has freelist page %d outside [2, %d)", m.freelist, m.pgid)
	}
	return m, ""
}

// page returns the header fields and the bytes of page id including its
// overflow pages, or reports why it cannot.
func (in *inspector) page(id uint64, what string) (flags, count uint16, buf []byte, ok bool) {
	if id < 2 || id >= in.hwm {
		in.damage(int64(id), "", "", "%s refers to page %d outside [2, %d)", what, id, in.hwm)
		return 0, 0, nil, false
	}
	h := in.data[id*in.pageSize:]
	if got := binary.LittleEndian.Uint64(h); got != id {
		in.damage(int64(id), "", "", "page header names page %d (%s)", got, what)
		return 0, 0, nil, false
	}
	flags, count = binary.LittleEndian.Uint16(h[8:]), binary.LittleEndian.Uint16(h[10:])
	overflow := uint64(binary.LittleEndian.Uint32(h[12:]))
	if id+overflow >= in.hwm {
		in.damage(int64(id), "", "", "page has %d overflow pages, past the %d pages in use (%s)", overflow, in.hwm, what)
		return 0, 0, nil, false
	}
	for i := id; i <= id+overflow; i++ {
		if in.used[i] {
			in.damage(int64(id), "", "", "page %d is referenced twice (%s)", i, what)
			return 0, 0, nil, false
		}
		if in.free[i] {
			in.damage(int64(id), "", "", "page %d is in use (%s) but listed in the freelist", i, what)
			return 0, 0, nil, false
		}
		in.used[i] = true
	}
	return flags, count, in.data[id*in.pageSize : (id+overflow+1)*in.pageSize], true
}

// freelist reads the freelist page.
func (in *inspector) freelist(id uint64) {
	flags, count, buf, ok := in.page(id, "freelist")
	if !ok {
		return
	}
	if flags != freelistPageFlag {
		in.damage(int64(id), "", "", "freelist page has page flags %#x, want %#x", flags, freelistPageFlag)
		return
	}
	n, start := uint64(count), uint64(pageHeaderSize)
	if count == 0xFFFF {
		n, start = binary.LittleEndian.Uint64(buf[pageHeaderSize:]), pageHeaderSize+8
	}
	if end := start + 8*n; n > in.hwm || end > uint64(len(buf)) {
		in.damage(int64(id), "", "", "freelist page lists %d pages, more than it holds", n)
		return
	}
	if at := nonZero(buf[start+8*n:]); at >= 0 {
		in.damage(int64(id), "", "", "stray byte at offset %d after the freelist's %d entries (damaged count or data)", start+8*n+uint64(at), n)
		return
	}
	for i := uint64(0); i < n; i++ {
		p := binary.LittleEndian.Uint64(buf[start+8*i:])
		switch {
		case p < 2 || p >= in.hwm:
			in.damage(int64(id), "", "", "freelist lists page %d outside [2, %d)", p, in.hwm)
		case in.free[p]:
			in.damage(int64(id), "", "", "freelist lists page %d twice", p)
		case in.used[p]:
			in.damage(int64(id), "", "", "freelist lists page %d, which holds the freelist", p)
		default:
			in.free[p] = true
		}
	}
}

// bucket walks the bucket at path whose tree starts at page root, or, when
// root is 0, is the inline page in inline.
func (in *inspector) bucket(path string, root uint64, inline []byte, depth int) {
	if root == 0 {
		if len(inline) < pageHeaderSize {
			in.damage(-1, path, "", "inline bucket of %d bytes is shorter than a page header", len(inline))
			return
		}
		flags, count := binary.LittleEndian.Uint16(inline[8:]), binary.LittleEndian.Uint16(inline[10:])
		if flags != leafPageFlag {
			in.damage(-1, path, "", "inline bucket page has flags %#x, want %#x", flags, leafPageFlag)
			return
		}
		entries, problem := decodePage(inline, flags, count, 0)
		if problem != "" {
			in.damage(-1, path, "", "inline bucket: %s", problem)
			return
		}
		if problem := keyOrder(entries, nil, nil); problem != "" {
			in.damage(-1, path, "", "inline bucket: %s", problem)
			return
		}
		for _, e := range entries {
			in.leafEntry(path, -1, e, depth)
		}
		return
	}
	in.tree(path, root, nil, nil, depth)
}

// tree walks the page id of the bucket at path, whose keys must lie in
// [lo, hi) (nil: unbounded).
func (in *inspector) tree(path string, id uint64, lo, hi []byte, depth int) {
	if depth > maxDepth {
		in.damage(int64(id), path, "", "tree deeper than %d levels", maxDepth)
		return
	}
	what := "bucket " + quoteBucket(path)
	flags, count, buf, ok := in.page(id, what)
	if !ok {
		return
	}
	if flags != branchPageFlag && flags != leafPageFlag {
		in.damage(int64(id), path, "", "page has flags %#x, want a branch (%#x) or leaf (%#x) page", flags, branchPageFlag, leafPageFlag)
		return
	}
	entries, problem := decodePage(buf, flags, count, in.pageSize)
	if problem != "" {
		in.damage(int64(id), path, "", "%s", problem)
		return
	}
	if problem := keyOrder(entries, lo, hi); problem != "" {
		in.damage(int64(id), path, "", "%s", problem)
		return
	}
	if flags == branchPageFlag {
		if len(entries) == 0 {
			in.damage(int64(id), path, "", "branch page has no elements")
			return
		}
		for i, e := range entries {
			next := hi
			if i+1 < len(entries) {
				next = entries[i+1].key
			}
			in.tree(path, e.child, e.key, next, depth+1)
		}
		return
	}
	for _, e := range entries {
		in.leafEntry(path, int64(id), e, depth)
	}
}

// leafEntry checks one leaf element of the bucket at path.
func (in *inspector) leafEntry(path string, page int64, e entry, depth int) {
	switch {
	case e.flags&^bucketLeafFlag != 0:
		in.damage(page, path, string(e.key), "leaf element has unknown flags %#x", e.flags)
	case path == "":
		// The root holds the buckets.
		if e.flags != bucketLeafFlag {
			in.damage(page, "", string(e.key), "the root holds a plain value where only buckets belong")
			return
		}
		switch {
		case bytes.Equal(e.key, bucketName):
			in.sawKV = true
		case bytes.Equal(e.key, formatBucket):
			in.sawFormat = true
		default:
			in.damage(page, "", string(e.key), "unknown bucket in the root (want %q or %q)", bucketName, formatBucket)
			return
		}
		if len(e.value) < inBucketSize {
			in.damage(page, string(e.key), "", "bucket header of %d bytes, want at least %d", len(e.value), inBucketSize)
			return
		}
		root := binary.LittleEndian.Uint64(e.value)
		if seq := binary.LittleEndian.Uint64(e.value[8:]); seq != 0 {
			// Strata never uses bucket sequences.
			in.damage(page, string(e.key), "", "bucket header has sequence %d, want 0", seq)
			return
		}
		if root != 0 && len(e.value) != inBucketSize {
			in.damage(page, string(e.key), "", "bucket on page %d carries %d inline bytes", root, len(e.value)-inBucketSize)
			return
		}
		in.bucket(string(e.key), root, e.value[inBucketSize:], depth+1)
	case e.flags == bucketLeafFlag:
		in.damage(page, path, string(e.key), "nested bucket where a value belongs")
	case path == string(bucketName):
		// The format record sorts after "kv": remember failures, and decide
		// once it is known whether the file is legacy.
		if !sealed(e.key, e.value) {
			in.badValues = append(in.badValues, e)
		}
	case path == string(formatBucket):
		if !bytes.Equal(e.key, formatKey) {
			in.damage(page, path, string(e.key), "unknown key in the format bucket")
			return
		}
		payload, problem := unseal(e.key, e.value)
		if problem != "" {
			in.damage(page, path, string(e.key), "%s", problem)
			return
		}
		if !bytes.Equal(payload, formatValue()) {
			in.damage(page, path, string(e.key), "unknown file format %x (want %x)", payload, formatValue())
		}
	}
}

// decodePage decodes the elements of a branch or leaf page image buf and
// checks bbolt's layout: elements follow the header, their keys and values
// are packed in element order right after them, and the page is no larger
// than its contents need (pageSize 0: an inline page, which its contents
// fill exactly). The returned keys and values alias buf.
func decodePage(buf []byte, flags, count uint16, pageSize uint64) ([]entry, string) {
	le := binary.LittleEndian
	n := uint64(count)
	off := pageHeaderSize + elementSize*n
	if off > uint64(len(buf)) {
		return nil, fmt.Sprintf("%d elements do not fit in a page of %d bytes", n, len(buf))
	}
	entries := make([]entry, 0, n)
	for i := uint64(0); i < n; i++ {
		at := pageHeaderSize + elementSize*i
		el := buf[at : at+elementSize]
		var e entry
		var pos, ksize, vsize uint64
		if flags == branchPageFlag {
			pos, ksize, e.child = uint64(le.Uint32(el)), uint64(le.Uint32(el[4:])), le.Uint64(el[8:])
		} else {
			e.flags, pos, ksize, vsize = le.Uint32(el), uint64(le.Uint32(el[4:])), uint64(le.Uint32(el[8:])), uint64(le.Uint32(el[12:]))
		}
		if at+pos != off {
			return nil, fmt.Sprintf("element %d starts at offset %d, want %d (damaged element or count)", i, at+pos, off)
		}
		if ksize == 0 {
			return nil, fmt.Sprintf("element %d has an empty key", i)
		}
		end := off + ksize + vsize
		if end > uint64(len(buf)) {
			return nil, fmt.Sprintf("element %d (%d+%d bytes at offset %d) runs past the page's %d bytes", i, ksize, vsize, off, len(buf))
		}
		e.key = buf[off : off+ksize]
		if flags == leafPageFlag {
			e.value = buf[off+ksize : end]
		}
		entries = append(entries, e)
		off = end
	}
	if pageSize == 0 {
		if off != uint64(len(buf)) {
			return nil, fmt.Sprintf("inline page holds %d bytes but its elements end at %d", len(buf), off)
		}
	} else if pages := (off + pageSize - 1) / pageSize; pages != uint64(len(buf))/pageSize {
		return nil, fmt.Sprintf("page spans %d pages but its %d bytes of elements need %d", uint64(len(buf))/pageSize, off, pages)
	} else if at := nonZero(buf[off:]); at >= 0 {
		// bbolt zeroes a page buffer before it writes a node into it.
		return nil, fmt.Sprintf("stray byte %#x at offset %d after the page's %d bytes of elements (damaged count or data)", buf[off+uint64(at)], off+uint64(at), off)
	}
	return entries, ""
}

// keyOrder checks that the keys are strictly increasing and within [lo, hi).
func keyOrder(entries []entry, lo, hi []byte) string {
	for i, e := range entries {
		if i > 0 && bytes.Compare(entries[i-1].key, e.key) >= 0 {
			return fmt.Sprintf("key %q at element %d does not sort after %q", e.key, i, entries[i-1].key)
		}
		if lo != nil && bytes.Compare(e.key, lo) < 0 {
			return fmt.Sprintf("key %q sorts before its parent's bound %q", e.key, lo)
		}
		if hi != nil && bytes.Compare(e.key, hi) >= 0 {
			return fmt.Sprintf("key %q does not sort before its parent's bound %q", e.key, hi)
		}
	}
	return ""
}

// nonZero returns the index of the first non-zero byte of b, or -1.
func nonZero(b []byte) int {
	var zeros [4096]byte
	for base := 0; base < len(b); base += len(zeros) {
		chunk := b[base:min(base+len(zeros), len(b))]
		if bytes.Equal(chunk, zeros[:len(chunk)]) {
			continue
		}
		for i, c := range chunk {
			if c != 0 {
				return base + i
			}
		}
	}
	return -1
}

func quoteBucket(path string) string {
	if path == "" {
		return "root"
	}
	return fmt.Sprintf("%q", path)
}
