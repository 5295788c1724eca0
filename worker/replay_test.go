package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
)

// replayRegistry registers workflows with a replayer; activities are not
// run in a replay, so they are not registered.
type replayRegistry struct{ sdkworker.WorkflowReplayer }

func (replayRegistry) RegisterActivity(any) {}

// TestRecordedHistoriesReplay replays histories recorded from real runs of
// earlier releases (testdata/histories, `temporal workflow show --output
// json` of an email-and-text alert and a phone verification under `make
// run`, and of the alerts, phone verifications, uploads and nonce prunes
// of the api/alerting, api/directory and api/files tests on the test stack
// (the same JSON, written from GetWorkflowHistory with protojson), named
// <workflow type>-<version>[-<outcome>].json) against the workflows as
// registered today. A change that makes a workflow non-deterministic for
// runs already in flight fails here; a new version of a workflow's shape
// adds its recorded history here.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	codec, err := payloadcrypt.New(payloadcrypt.DevKeys, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			r, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{
				DataConverter:    codec.DataConverter(),
				FailureConverter: codec.FailureConverter(),
			})
			if err != nil {
				t.Fatal(err)
			}
			Register(replayRegistry{r}, &activities.Activities{})
			in, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			h, err := client.HistoryFromJSON(in, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			if err := r.ReplayWorkflowHistory(nil, h); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
