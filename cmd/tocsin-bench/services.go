package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// services are the options of the benchmarks that run tocsin on the test
// services (alert, crash, load, fuzz): the tocsin binary they start, the
// folder for results and logs, and PostgreSQL, Temporal and MinIO.
type services struct {
	tocsin, out, dbURL, temporal, minio string
}

// flags declares the options on fs; tocsinHelp and outHelp say what the
// binary and the folder are for in this benchmark.
func (s *services) flags(fs *flag.FlagSet, tocsinHelp, outHelp string) {
	fs.StringVar(&s.tocsin, "tocsin", "bin/tocsin", tocsinHelp)
	fs.StringVar(&s.out, "out", ".bench", outHelp)
	fs.StringVar(&s.dbURL, "database", envOr("TOCSIN_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tocsin_bench?sslmode=disable"), "PostgreSQL database (a schema of its own is created per run)")
	fs.StringVar(&s.temporal, "temporal", envOr("TOCSIN_BENCH_TEMPORAL_ADDRESS", "127.0.0.1:17233"), "Temporal frontend")
	fs.StringVar(&s.minio, "minio", envOr("TOCSIN_BENCH_MINIO_ENDPOINT", "127.0.0.1:19000"), "MinIO endpoint")
}

// env is the environment of a tocsin process on the services: the
// database dsn (a run's schema), the task queue and the bucket, then more.
func (s services) env(dsn, queue, bucket string, more ...string) []string {
	return append(append(os.Environ(),
		"TOCSIN_DATABASE_URL="+dsn, "TOCSIN_TEMPORAL_ADDRESS="+s.temporal, "TOCSIN_TEMPORAL_TASK_QUEUE="+queue,
		"TOCSIN_MINIO_ENDPOINT="+s.minio, "TOCSIN_MINIO_BUCKET="+bucket), more...)
}

// workerEnv is the environment of a benchmark's worker process, which
// sends text messages to smsURL; more adds variables.
func (s services) workerEnv(dsn, queue, smsURL string, more ...string) []string {
	return s.env(dsn, queue, "bench", append([]string{"TOCSIN_SMS_URL=" + smsURL, "TOCSIN_SMS_TOKEN=",
		"TOCSIN_WORKER_METRICS_ADDR=127.0.0.1:0", "TOCSIN_LOG_LEVEL=" + envOr("TOCSIN_BENCH_WORKER_LOG_LEVEL", "warn"),
		"TOCSIN_DB_MAX_OPEN_CONNS=20"}, more...)...)
}

// logPath is where the process logged as name writes its output.
func (s services) logPath(name string) string { return filepath.Join(s.out, "logs", name+".log") }

// start runs the tocsin binary with args (a command: worker, dev) and env,
// its output going to logPath(name).
func (s services) start(name string, env []string, args ...string) (*workerProc, error) {
	_ = os.MkdirAll(filepath.Join(s.out, "logs"), 0o755)
	f, err := os.Create(s.logPath(name))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.tocsin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s %v: %w", s.tocsin, args, err)
	}
	w := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(w.done) }()
	return w, nil
}
