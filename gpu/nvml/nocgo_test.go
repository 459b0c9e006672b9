//go:build !cgo

package nvml

import (
	"errors"
	"testing"
)

func TestNoCgoStub(t *testing.T) {
	if _, err := Open(Options{}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("err = %v, want ErrNotSupported", err)
	}
}
