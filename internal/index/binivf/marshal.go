package binivf

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/index/indexfile"
)

// headerSize is the length of the fixed header: the envelope's magic and
// version, then metric, dim, nlist, seed and the row count.
const headerSize = 40

// ErrCorrupt is wrapped by every Unmarshal error caused by malformed data.
var ErrCorrupt = errors.New("binivf: corrupt index data")

// format is the file envelope; the payload is described in the package
// documentation.
var format = indexfile.Format{Magic: "STRBIVF\x00", Version: 1, VersionSize: 4, Corrupt: ErrCorrupt}

// Marshal writes the index in the version-1 format described in the
// package documentation.
func (x *Index) Marshal(w io.Writer) error {
	fw := format.NewWriter(w)
	le := binary.LittleEndian
	h := make([]byte, headerSize-format.HeaderSize())
	le.PutUint32(h[0:], uint32(x.metric)) // file offset 12
	le.PutUint32(h[4:], uint32(x.dim))
	le.PutUint32(h[8:], uint32(x.cfg.Nlist))
	le.PutUint64(h[12:], x.cfg.Seed)
	le.PutUint64(h[20:], uint64(x.n))
	fw.Write(h)
	fw.Write(x.centroids)
	var b [4]byte
	for _, o := range x.offsets {
		le.PutUint32(b[:], o)
		fw.Write(b[:])
	}
	for _, r := range x.rows {
		le.PutUint32(b[:], uint32(r))
		fw.Write(b[:])
	}
	fw.Write(x.vecs)
	return fw.Close()
}

// Unmarshal reads an index written by Marshal, checking its checksum and
// every structural invariant Search relies on.
func Unmarshal(r io.Reader) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	corrupt := format.Errorf
	if _, err := format.Open(data); err != nil {
		return nil, err
	}
	if len(data) < headerSize+4 {
		return nil, corrupt("%d bytes is too short", len(data))
	}
	// The offsets below are from the start of the file, as in the package
	// documentation.
	le := binary.LittleEndian
	body := data[:len(data)-4]
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
