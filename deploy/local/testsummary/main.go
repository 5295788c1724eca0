// Command testsummary reads `go test -json` on standard input and prints what
// a plain `go test` prints (package results, the output of failed tests,
// build errors), then one summary line counting passed, failed and skipped
// tests, and lists every skipped test with its reason, so a skip is never
// hidden behind a package's "ok".
//
//	go test -json ./... | go run ./deploy/local/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	outputs := map[key][]string{}
	var passed, failed, skipped int
	var skips []string
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // not JSON: a build error or a crash
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "output":
			if e.Test == "" {
				if o := strings.TrimSpace(e.Output); o != "PASS" && o != "FAIL" && !strings.HasPrefix(e.Output, "=== ") {
					fmt.Fprint(out, e.Output)
				}
				continue
			}
			if !strings.HasPrefix(e.Output, "=== ") {
				outputs[k] = append(outputs[k], e.Output)
			}
		case "pass", "fail", "skip":
			if e.Test == "" {
				continue
			}
			lines := outputs[k]
			delete(outputs, k)
			top := !strings.Contains(e.Test, "/")
			switch e.Action {
			case "pass":
				if top {
					passed++
				}
			case "fail":
				if top {
					failed++
				}
				fmt.Fprint(out, strings.Join(lines, ""))
			case "skip":
				if top {
					skipped++
				}
				skips = append(skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(lines)))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read go test output: %w", err)
	}
	fmt.Fprintf(out, "\ntests: %d passed, %d failed, %d skipped (%d skips with subtests, listed below)\n", passed, failed, skipped, len(skips))
	sort.Strings(skips)
	for _, s := range skips {
		fmt.Fprintf(out, "  skipped %s\n", s)
	}
	return nil
}

// reason is what a skipped test logged, on one line.
func reason(lines []string) string {
	var r []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--- SKIP") {
			r = append(r, l)
		}
	}
	if len(r) == 0 {
		return "no reason given"
	}
	return strings.Join(r, " ")
}
