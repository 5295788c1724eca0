// Command tocsin-bench measures tocsin on the local services and writes JSON
// and a Markdown table of the figures under .bench/. `import` imports a
// generated 1,000,000-row contacts CSV and reports rows/s and peak memory;
// `alert` sends
// a text alert to many seeded contacts through a loopback SMS endpoint and
// reports accept latency, time to every recipient final, deliveries per
// second and the worker's peak memory; `crash` kills the worker in the
// middle of such an alert and checks that it still completes with exactly
// one result per recipient.
package main

import (
	"fmt"
	"os"
)

const usage = `usage: tocsin-bench <command> [flags]

commands:
  import  contacts CSV import, export and search at 1,000,000 rows (see import -h)
  alert   fan-out benchmark of one text alert (see alert -h)
  crash   SIGKILL the worker mid fan-out, restart it, check every recipient has exactly one result (see crash -h)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "import":
		err = runImport(os.Args[2:])
	case "alert":
		err = runAlert(os.Args[2:], false)
	case "crash":
		err = runAlert(os.Args[2:], true)
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tocsin-bench:", err)
		os.Exit(1)
	}
}
