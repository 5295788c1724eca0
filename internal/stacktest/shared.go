package stacktest

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
)

// shared is the package's stack that Shared starts and Main stops.
var shared struct {
	sync.Mutex
	main     bool
	stack    *Stack
	err      error
	cleanups []func()
	logs     lockedBuffer
}

// Main runs the package's tests, then stops the stack Shared started. Call it
// from TestMain:
//
//	func TestMain(m *testing.M) { stacktest.Main(m) }
//
// The shared stack's warnings and errors are printed when a test failed.
// Run by StartAPIProcess, the test binary serves the API instead; run by
// StartWorkerProcess, it runs a worker.
func Main(m *testing.M) {
	if cfg := os.Getenv(apiProcessEnv); cfg != "" {
		err := serveAPIProcess(cfg)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if cfg := os.Getenv(workerProcessEnv); cfg != "" {
		err := runWorkerProcess(cfg)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	for i := len(shared.cleanups) - 1; i >= 0; i-- {
		shared.cleanups[i]()
	}
	shared.Unlock()
	if code != 0 && shared.logs.Len() > 0 {
		fmt.Fprintf(os.Stderr, "shared stack log:\n%s", shared.logs.String())
	}
	os.Exit(code)
}

// Shared returns the stack the package's tests share, starting it on first
// use with the default configuration. Tests that share it must leave it as
// they found it (no swapped clients, no assertions on process-wide counters)
// and keep to tenants of their own (NewTenant). The package's TestMain must
// call Main, which stops the stack after the last test.
func Shared(t testing.TB) *Stack {
	t.Helper()
	needServices(t)
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		t.Fatal("stacktest.Shared needs func TestMain(m *testing.M) { stacktest.Main(m) } in the package")
	}
	if shared.stack == nil && shared.err == nil {
		cleanup := func(f func()) { shared.cleanups = append(shared.cleanups, f) }
		shared.stack, shared.err = launchAPI(cleanup, &shared.logs)
		if shared.err == nil {
			_, shared.err = shared.stack.startWorker(cleanup, WorkerOptions{})
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.stack
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
