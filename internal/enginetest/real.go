package enginetest

import (
	"errors"
	"testing"

	"github.com/strata-db/strata/internal/enginelaunch"
)

// RealKafka starts an Apache Kafka 4 broker (enginelaunch.Kafka) until the
// test ends, skipping the test, naming what is missing, when it is not
// installed (.ci/engines.sh).
func RealKafka(t testing.TB) *enginelaunch.Process {
	t.Helper()
	return real(t, enginelaunch.Kafka)
}

// RealS3 starts Versity S3 Gateway (enginelaunch.S3; credentials
// enginelaunch.S3AccessKey / S3SecretKey) until the test ends, skipping
// the test when it is not installed.
func RealS3(t testing.TB) *enginelaunch.Process {
	t.Helper()
	return real(t, enginelaunch.S3)
}

func real(t testing.TB, launch func(dir, addr string) (*enginelaunch.Process, error)) *enginelaunch.Process {
	t.Helper()
	p, err := launch(t.TempDir(), "")
	if errors.Is(err, enginelaunch.ErrNotInstalled) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}
