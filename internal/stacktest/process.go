package stacktest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/worker"
)

// apiProcessEnv and workerProcessEnv carry to a test binary that Main runs
// as an API or a worker process the configuration it runs with, as JSON.
const (
	apiProcessEnv    = "TOCSIN_TEST_API_PROCESS"
	workerProcessEnv = "TOCSIN_TEST_WORKER_PROCESS"
)

// listeningPrefix starts the line on which an API process says where it
// listens; workerReady is the line on which a worker process says that it
// polls.
const (
	listeningPrefix = "tocsin test api listening on "
	workerReady     = "tocsin test worker polling"
)

// Process is a part of tocsin running in a process of its own, which a
// test can kill.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// APIProcess is tocsin's API running in a process of its own, which a test
// can kill.
type APIProcess struct {
	*Process
	URL string
}

// StartAPIProcess runs the stack's API once more, in a process of its own
// (the test binary, which Main turns into an API server), on the stack's
// database, bucket and task queue, with configure applied to the stack's
// configuration. Kill then ends it as SIGKILL, the out-of-memory killer or
// a hasty deploy would: nothing of it runs after. The package's TestMain
// must call Main. The process's log is shown when the test fails.
func (s *Stack) StartAPIProcess(t testing.TB, configure ...func(*config.Config)) *APIProcess {
	t.Helper()
	p, line := s.startProcess(t, "API", apiProcessEnv, func(l string) bool { return strings.HasPrefix(l, listeningPrefix) }, configure)
	return &APIProcess{Process: p, URL: "http://" + strings.TrimPrefix(line, listeningPrefix)}
}

// StartWorkerProcess runs a worker, with the hook dispatcher and the
// workflow starter, as `tocsin worker` does, in a process of its own (the
// test binary, which Main turns into a worker), on the stack's database,
// bucket and task queue, with configure applied to the stack's
// configuration. It returns once the worker polls; Kill then ends it as
// SIGKILL would, in the middle of whatever it was doing. The package's
// TestMain must call Main. The process's log is shown when the test fails.
func (s *Stack) StartWorkerProcess(t testing.TB, configure ...func(*config.Config)) *Process {
	t.Helper()
	p, _ := s.startProcess(t, "worker", workerProcessEnv, func(l string) bool { return l == workerReady }, configure)
	return p
}

// startProcess runs the test binary with the stack's configuration, with
// configure applied, in env, and returns it with the first line of its
// output for which ready is true.
func (s *Stack) startProcess(t testing.TB, what, env string, ready func(string) bool, configure []func(*config.Config)) (*Process, string) {
	t.Helper()
	cfg := s.Config
	cfg.DatabaseURL = s.DB.URL
	for _, f := range configure {
		f(&cfg)
	}
	enc, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+string(enc))
	var logs lockedBuffer
	cmd.Stderr = &logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the %s process: %v", what, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); ready(l) {
				lines <- l
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s process log:\n%s", what, logs.String())
		}
	})
	select {
	case l := <-lines:
		return p, l
	case <-p.done:
		t.Fatalf("the %s process ended before it was ready:\n%s", what, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the %s process was not ready within 30 s:\n%s", what, logs.String())
	}
	return nil, ""
}

// Kill ends the process with SIGKILL and waits until it is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// serveAPIProcess is the API process: it serves tocsin's API with the
// configuration in cfgJSON until it is killed, saying first where it
// listens on stdout.
func serveAPIProcess(cfgJSON string) error {
	var cfg config.Config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fmt.Errorf("%s: %w", apiProcessEnv, err)
	}
	ctx := context.Background()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	srv, err := a.Server(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(listeningPrefix + ln.Addr().String())
	if err := srv.App.Listener(ln); err != nil {
		return err
	}
	return errors.New("the API stopped")
}

// runWorkerProcess is the worker process: it runs a worker, the hook
// dispatcher and the workflow starter with the configuration in cfgJSON
// until it is killed, saying first that it polls on stdout.
func runWorkerProcess(cfgJSON string) error {
	var cfg config.Config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fmt.Errorf("%s: %w", workerProcessEnv, err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.Open(context.Background(), cfg, logger)
	if err != nil {
		return err
	}
	if _, err := a.StartWorker(worker.Options{}); err != nil {
		return err
	}
	fmt.Println(workerReady)
	select {}
}
