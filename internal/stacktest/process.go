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
)

// apiProcessEnv carries to a test binary that Main runs as an API process
// the configuration it serves with, as JSON.
const apiProcessEnv = "TOCSIN_TEST_API_PROCESS"

// listeningPrefix starts the line on which an API process says where it
// listens.
const listeningPrefix = "tocsin test api listening on "

// APIProcess is tocsin's API running in a process of its own, which a test
// can kill.
type APIProcess struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartAPIProcess runs the stack's API once more, in a process of its own
// (the test binary, which Main turns into an API server), on the stack's
// database, bucket and task queue, with configure applied to the stack's
// configuration. Kill then ends it as SIGKILL, the out-of-memory killer or
// a hasty deploy would: nothing of it runs after. The package's TestMain
// must call Main. The process's log is shown when the test fails.
func (s *Stack) StartAPIProcess(t testing.TB, configure ...func(*config.Config)) *APIProcess {
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
	cmd.Env = append(os.Environ(), apiProcessEnv+"="+string(enc))
	var logs lockedBuffer
	cmd.Stderr = &logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the API process: %v", err)
	}
	p := &APIProcess{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), listeningPrefix); ok {
				addr <- a
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("API process log:\n%s", logs.String())
		}
	})
	select {
	case a := <-addr:
		p.URL = "http://" + a
	case <-p.done:
		t.Fatalf("the API process ended before it listened:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the API process did not listen within 30 s:\n%s", logs.String())
	}
	return p
}

// Kill ends the process with SIGKILL and waits until it is gone.
func (p *APIProcess) Kill() {
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
