package rabitq

import (
	"bytes"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bytesReader reads b.
func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
