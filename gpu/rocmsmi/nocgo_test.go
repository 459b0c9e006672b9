//go:build !cgo

package rocmsmi

import (
	"errors"
	"testing"
)

func TestNoCgoStub(t *testing.T) {
	if _, err := Open(Options{}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("err = %v, want ErrNotSupported", err)
	}
}
