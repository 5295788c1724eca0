package recipients_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestMain stops the stack the package's tests share (stacktest.Shared).
func TestMain(m *testing.M) { stacktest.Main(m) }
