package scalar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"

	"github.com/strata-db/strata/internal/index/indexfile"
)

// headerSize is the fixed start of the payload: kind, keyType, flags, rows,
// nkeys.
const headerSize = 1 + 1 + 1 + 4 + 4

// ErrCorrupt is returned (wrapped) by Unmarshal for a malformed file.
var ErrCorrupt = errors.New("scalar: corrupt index file")

// format is the file envelope.
var format = indexfile.Format{Magic: "STSX", Version: 1, VersionSize: 2, Corrupt: ErrCorrupt}

// Marshal writes the index in the format described in the package
// documentation.
func (x *Index) Marshal(w io.Writer) error {
	var b bytes.Buffer
	le := binary.LittleEndian
	flags := byte(0)
	if x.array {
		flags = 1
	}
	b.Write([]byte{byte(x.kind), byte(x.kt), flags})
	b.Write(le.AppendUint32(nil, uint32(x.rows)))
	b.Write(le.AppendUint32(nil, uint32(x.Cardinality())))
	var tmp [binary.MaxVarintLen64]byte
	switch x.kt {
	case keyInt:
		for _, v := range x.ints {
			b.Write(le.AppendUint64(tmp[:0], uint64(v)))
		}
	case keyFloat:
		for _, v := range x.flts {
			b.Write(le.AppendUint64(tmp[:0], math.Float64bits(v)))
		}
	case keyString:
		for _, v := range x.strs {
			b.Write(binary.AppendUvarint(tmp[:0], uint64(len(v))))
			b.WriteString(v)
		}
	}
	for _, o := range x.offs {
		b.Write(le.AppendUint32(tmp[:0], o))
	}
	for _, r := range x.post {
		b.Write(le.AppendUint32(tmp[:0], r))
	}
	fw := format.NewWriter(w)
	_, _ = fw.Write(b.Bytes())
	return fw.Close()
}

// Unmarshal decodes an index written by Marshal, validating it fully.
func Unmarshal(data []byte) (*Index, error) {
	corrupt := format.Errorf
	body, err := format.Open(data)
	if err != nil {
		return nil, err
	}
	if len(body) < headerSize {
		return nil, corrupt("%d bytes is shorter than the header", len(data))
	}
	le := binary.LittleEndian
	x := &Index{kind: Kind(body[0]), kt: keyType(body[1]), array: body[2]&1 != 0, rows: int(le.Uint32(body[3:]))}
	if x.kind < Inverted || x.kind > Trie {
		return nil, corrupt("unknown kind %d", body[0])
	}
	nkeys := int(le.Uint32(body[7:]))
	p := body[headerSize:]
	need := func(n int) error {
		if n < 0 || len(p) < n {
			return corrupt("truncated: need %d bytes, have %d", n, len(p))
		}
		return nil
	}
	switch x.kt {
	case keyInt, keyFloat:
		if err := need(nkeys * 8); err != nil {
			return nil, err
		}
		if x.kt == keyInt {
			x.ints = make([]int64, nkeys)
		} else {
			x.flts = make([]float64, nkeys)
		}
		for i := range nkeys {
			u := le.Uint64(p[i*8:])
			if x.kt == keyInt {
				x.ints[i] = int64(u)
				if i > 0 && x.ints[i-1] >= x.ints[i] {
					return nil, corrupt("keys out of order at %d", i)
				}
			} else {
				x.flts[i] = math.Float64frombits(u)
				if math.IsNaN(x.flts[i]) || i > 0 && !(x.flts[i-1] < x.flts[i]) {
					return nil, corrupt("keys out of order at %d", i)
				}
			}
		}
		p = p[nkeys*8:]
	case keyString:
		if nkeys > len(p) {
			return nil, corrupt("%d keys in %d bytes", nkeys, len(p))
		}
		x.strs = make([]string, nkeys)
		for i := range nkeys {
			n, w := binary.Uvarint(p)
			if w <= 0 || n > uint64(len(p)-w) {
				return nil, corrupt("bad string length at key %d", i)
			}
			x.strs[i] = string(p[w : w+int(n)])
			p = p[w+int(n):]
			if i > 0 && x.strs[i-1] >= x.strs[i] {
				return nil, corrupt("keys out of order at %d", i)
			}
		}
	default:
		return nil, corrupt("unknown key type %d", body[1])
	}
	if err := need((nkeys + 1) * 4); err != nil {
		return nil, err
	}
	x.offs = make([]uint32, nkeys+1)
	for i := range x.offs {
		x.offs[i] = le.Uint32(p[i*4:])
		if i == 0 && x.offs[0] != 0 || i > 0 && x.offs[i] < x.offs[i-1] {
			return nil, corrupt("offsets out of order at %d", i)
		}
	}
	p = p[len(x.offs)*4:]
	total := int(x.offs[nkeys])
	if len(p) != total*4 {
		return nil, corrupt("%d posting bytes, want %d", len(p), total*4)
	}
	x.post = make([]uint32, total)
	for i := range x.post {
		x.post[i] = le.Uint32(p[i*4:])
		if int(x.post[i]) >= x.rows {
			return nil, corrupt("posting %d names row %d of %d", i, x.post[i], x.rows)
		}
	}
	for k := range nkeys {
		run := x.post[x.offs[k]:x.offs[k+1]]
		if len(run) == 0 {
			return nil, corrupt("key %d has no rows", k)
		}
		for i := 1; i < len(run); i++ {
			if run[i-1] >= run[i] {
				return nil, corrupt("postings of key %d out of order", k)
			}
		}
	}
	return x, nil
}
