package scalar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

const (
	magic   = "STSX"
	version = 1
	// headerSize is magic, version, kind, keyType, flags, rows, nkeys.
	headerSize = 4 + 2 + 1 + 1 + 1 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is returned (wrapped) by Unmarshal for a malformed file.
var ErrCorrupt = errors.New("scalar: corrupt index file")

// Marshal writes the index in the format described in the package
// documentation.
func (x *Index) Marshal(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString(magic)
	le := binary.LittleEndian
	b.Write(le.AppendUint16(nil, version))
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
	b.Write(le.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	_, err := w.Write(b.Bytes())
	return err
}

// Unmarshal decodes an index written by Marshal, validating it fully.
func Unmarshal(data []byte) (*Index, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < headerSize+4 {
		return nil, corrupt("%d bytes is shorter than the header", len(data))
	}
	if string(data[:4]) != magic {
		return nil, corrupt("bad magic %q", data[:4])
	}
	le := binary.LittleEndian
	body, sum := data[:len(data)-4], le.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, corrupt("checksum mismatch")
	}
	if v := le.Uint16(data[4:]); v != version {
		return nil, corrupt("unsupported version %d", v)
	}
	x := &Index{kind: Kind(data[6]), kt: keyType(data[7]), array: data[8]&1 != 0, rows: int(le.Uint32(data[9:]))}
	if x.kind < Inverted || x.kind > Trie {
		return nil, corrupt("unknown kind %d", data[6])
	}
	nkeys := int(le.Uint32(data[13:]))
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
		return nil, corrupt("unknown key type %d", data[7])
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
