package teamchat_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/teamchat"
	"github.com/tocsin/tocsin/channels/teamchat/teamchattest"
)

func TestWebhooksEndToEnd(t *testing.T) {
	srv := teamchattest.New(t)
	snd := &teamchat.Sender{Targets: []teamchat.Target{
		{Name: "ops", URL: srv.Webhook("slack", "T000/B000/xyz"), Style: teamchat.StyleSlack},
		{Name: "council", URL: srv.Webhook("teams", "abc123"), Style: teamchat.StyleTeams},
		{Name: "old", URL: srv.Webhook("slack", "gone"), Style: teamchat.StyleSlack},
	}, Client: providerhttp.NewClient(0, 0)}
	srv.Archive("gone")
	urgent := teamchat.Options{Urgent: true}
	msgs := []channels.Message{
		{Key: "1", To: "ops", Subject: "Gas leak", Text: "Avoid *Main St*", Options: urgent},
		{Key: "2", To: "council", Subject: "Gas leak", Text: "Avoid Main St", Options: urgent},
		{Key: "3", To: "old", Subject: "Gas leak", Text: "x"},
		{Key: "4", To: "nobody", Subject: "Gas leak", Text: "x"},
	}
	res, err := snd.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != channels.Delivered || res[1].Outcome != channels.Delivered {
		t.Fatalf("%+v", res[:2])
	}
	if res[2].Outcome != channels.Failed || !res[2].Permanent || res[3].Outcome != channels.Failed || !res[3].Permanent {
		t.Fatalf("%+v", res[2:])
	}
	if p := srv.Problems(); len(p) != 0 {
		t.Fatalf("problems %v", p)
	}
	posts := srv.Posts()
	if len(posts) != 2 {
		t.Fatalf("posts %+v", posts)
	}
	for _, p := range posts {
		switch p.Style {
		case "slack":
			if p.Secret != "T000/B000/xyz" || p.Slack.Blocks[0].Text.Text != "🚨 Gas leak" || p.Slack.Blocks[1].Text.Type != "mrkdwn" {
				t.Fatalf("slack %+v", p.Slack)
			}
		case "teams":
			if b := p.Teams.Attachments[0].Content.Body; b[0].Color != "Attention" || b[1].Text != "Avoid Main St" {
				t.Fatalf("teams %+v", b)
			}
		}
	}
}
