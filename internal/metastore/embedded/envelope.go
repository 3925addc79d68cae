package embedded

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// envelopeVersion is the first byte of every stored value (see doc.go).
const envelopeVersion = 1

// envelopeHeader is the size of the envelope before the payload: the
// version byte and the CRC-32C.
const envelopeHeader = 5

// formatVersion is the file format recorded under formatBucket/formatKey.
const formatVersion = 1

// castagnoli is the CRC-32C table used by the envelope.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// valueCRC is the envelope checksum: CRC-32C over the key, then the payload.
func valueCRC(key, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, payload)
}

// seal wraps payload in the envelope for key.
func seal(key, payload []byte) []byte {
	out := make([]byte, envelopeHeader+len(payload))
	out[0] = envelopeVersion
	binary.BigEndian.PutUint32(out[1:envelopeHeader], valueCRC(key, payload))
	copy(out[envelopeHeader:], payload)
	return out
}

// unseal checks the envelope of the value stored at key and returns its
// payload (aliasing stored), or a description of what is wrong.
func unseal(key, stored []byte) ([]byte, string) {
	if len(stored) < envelopeHeader {
		return nil, fmt.Sprintf("value of %d bytes is shorter than its %d-byte checksum envelope", len(stored), envelopeHeader)
	}
	if stored[0] != envelopeVersion {
		return nil, fmt.Sprintf("value has unknown envelope version %d (want %d)", stored[0], envelopeVersion)
	}
	payload := stored[envelopeHeader:]
	want := binary.BigEndian.Uint32(stored[1:envelopeHeader])
	if got := valueCRC(key, payload); got != want {
		return nil, fmt.Sprintf("checksum mismatch: stored crc32c %08x, computed %08x over the key and %d-byte value", want, got, len(payload))
	}
	return payload, ""
}

// sealed reports whether stored is a sound envelope for key.
func sealed(key, stored []byte) bool {
	return len(stored) >= envelopeHeader && stored[0] == envelopeVersion &&
		binary.BigEndian.Uint32(stored[1:envelopeHeader]) == valueCRC(key, stored[envelopeHeader:])
}

// formatValue is the payload stored under formatBucket/formatKey.
func formatValue() []byte { return binary.BigEndian.AppendUint32(nil, formatVersion) }
