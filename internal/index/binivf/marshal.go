package binivf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/strata-db/strata/internal/index"
)

const (
	magic         = "STRBIVF\x00"
	formatVersion = 1
	headerSize    = 40
)

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("binivf: corrupt index data")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Marshal writes the index in the version-1 format described in the
// package documentation.
func (x *Index) Marshal(w io.Writer) error {
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	le := binary.LittleEndian
	h := make([]byte, headerSize)
	copy(h, magic)
	le.PutUint32(h[8:], formatVersion)
	le.PutUint32(h[12:], uint32(x.metric))
	le.PutUint32(h[16:], uint32(x.dim))
	le.PutUint32(h[20:], uint32(x.cfg.Nlist))
	le.PutUint64(h[24:], x.cfg.Seed)
	le.PutUint64(h[32:], uint64(x.n))
	bw.Write(h)
	bw.Write(x.centroids)
	var b [4]byte
	for _, o := range x.offsets {
		le.PutUint32(b[:], o)
		bw.Write(b[:])
	}
	for _, r := range x.rows {
		le.PutUint32(b[:], uint32(r))
		bw.Write(b[:])
	}
	bw.Write(x.vecs)
	if err := bw.Flush(); err != nil {
		return err
	}
	le.PutUint32(b[:], crc.Sum32())
	_, err := w.Write(b[:])
	return err
}

// Unmarshal reads an index written by Marshal, checking its checksum and
// every structural invariant Search relies on.
func Unmarshal(r io.Reader) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < headerSize+4 {
		return nil, corrupt("%d bytes is too short", len(data))
	}
	le := binary.LittleEndian
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, corrupt("checksum mismatch")
	}
	if string(body[:8]) != magic {
		return nil, corrupt("bad magic %q", body[:8])
	}
	if v := le.Uint32(body[8:]); v != formatVersion {
		return nil, corrupt("unsupported version %d", v)
	}
	dim, nlist := le.Uint32(body[16:]), le.Uint32(body[20:])
	if dim > 1<<24 || nlist > MaxNlist {
		return nil, corrupt("dim %d, nlist %d", dim, nlist)
	}
	x, err := newIndex(int(dim), index.Metric(le.Uint32(body[12:])), Config{Nlist: int(nlist), Seed: le.Uint64(body[24:])})
	if err != nil {
		return nil, corrupt("%v", err)
	}
	n := le.Uint64(body[32:])
	w := uint64(x.width)
	want := uint64(headerSize) + uint64(nlist)*w + 4*(uint64(nlist)+1) + n*(4+w)
	if n > 1<<31 || uint64(len(body)) != want {
		return nil, corrupt("%d bytes for %d rows, want %d", len(body), n, want)
	}
	x.n = int(n)
	p := body[headerSize:]
	x.centroids = append([]byte(nil), p[:uint64(nlist)*w]...)
	p = p[uint64(nlist)*w:]
	x.offsets = make([]uint32, nlist+1)
	for i := range x.offsets {
		x.offsets[i] = le.Uint32(p[4*i:])
		if x.offsets[i] > uint32(n) || (i > 0 && x.offsets[i] < x.offsets[i-1]) {
			return nil, corrupt("list offset %d is %d", i, x.offsets[i])
		}
	}
	if x.offsets[0] != 0 || x.offsets[nlist] != uint32(n) {
		return nil, corrupt("list offsets span %d..%d, want 0..%d", x.offsets[0], x.offsets[nlist], n)
	}
	p = p[4*(nlist+1):]
	x.rows = make([]int32, n)
	seen := make([]bool, n)
	for i := range x.rows {
		r := le.Uint32(p[4*i:])
		if uint64(r) >= n || seen[r] {
			return nil, corrupt("row number %d at position %d", r, i)
		}
		seen[r] = true
		x.rows[i] = int32(r)
	}
	x.vecs = append([]byte(nil), p[4*n:]...)
	return x, nil
}
