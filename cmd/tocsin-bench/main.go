// Command tocsin-bench measures tocsin on the local services and writes the
// figures as JSON and a Markdown table under .bench/:
//
//	tocsin-bench alert   a text alert to many seeded contacts through a loopback SMS endpoint
//	tocsin-bench crash   the same, with the worker SIGKILLed mid fan-out and restarted
//	tocsin-bench load    many small alerts: a burst, open-loop rates, Emergency work during a flood, and Temporal's own limit
//	tocsin-bench import  a 1,000,000-row contacts CSV imported as a distribution list
//	tocsin-bench hooks   one tenant's flood of events to its hook subscriptions: dispatched, then delivered to a loopback target
//	tocsin-bench fuzz    hostile requests over every operation against a real API process, then slow request heads
package main

import (
	"fmt"
	"os"
)

const usage = `usage: tocsin-bench <command> [flags]

commands:
  alert   fan-out benchmark of one text alert (see alert -h)
  crash   SIGKILL the worker mid fan-out, restart it, check every recipient has exactly one result (see crash -h)
  load    many small alerts at once, open-loop rates, Emergency first during a flood (see load -h)
  import  contacts CSV import, export and search benchmark (see import -h)
  hooks   a flood of events of one tenant to its hook subscriptions: starts/s of the dispatcher,
          then deliveries/s to a loopback target (see hooks -h)
  fuzz    hostile requests over every operation, then 2,000 slow request heads beside normal requests;
          fails on a 5xx, a failed normal request or a peak RSS over 512 MB (see fuzz -h)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "alert":
		err = runAlert(os.Args[2:], false)
	case "crash":
		err = runAlert(os.Args[2:], true)
	case "load":
		err = runLoad(os.Args[2:])
	case "import":
		err = runImport(os.Args[1:])
	case "hooks":
		err = runHooks(os.Args[2:])
	case "fuzz":
		err = runFuzz(os.Args[2:])
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tocsin-bench:", err)
		os.Exit(1)
	}
}
