package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/channels/sms"
)

func TestInspectServesWhatArrived(t *testing.T) {
	sb, err := sandbox.Start(sandbox.Config{SMTPAddr: "127.0.0.1:0", SMSURL: "http://127.0.0.1:0/messages", SMSToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A waiter started before the message arrives sees it.
	got := make(chan sandbox.Email, 1)
	go func() {
		e, err := sb.SMTP.WaitTo(ctx, "ada@example.com")
		if err == nil {
			got <- e
		}
		close(got)
	}()
	es, _ := email.New(email.Config{Addr: sb.SMTP.Addr(), From: "alerts@tocsin.test"})
	if res, err := es.Send(ctx, []channels.Message{{Key: "k", To: "ada@example.com", Subject: "Hello", Text: "Code 123456"}}); err != nil || res[0].Outcome != channels.Sent {
		t.Fatalf("%+v %v", res, err)
	}
	if e := <-got; e.Subject != "Hello" {
		t.Fatalf("waiter got %+v", e)
	}
	ss, _ := sms.New(sms.Config{URL: sb.SMS.URL(), Token: "tok"})
	if res, err := ss.Send(ctx, []channels.Message{{Key: "k", To: "+15551230000", Text: "Code 654321"}}); err != nil || res[0].Outcome != channels.Sent {
		t.Fatalf("%+v %v", res, err)
	}

	h := sb.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/messages", nil))
	var all sandbox.Received
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Emails) != 1 || all.Emails[0].Text == "" || len(all.Texts) != 1 || all.Texts[0].Body != "Code 654321" {
		t.Fatalf("%s", rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/messages", nil))
	if rec.Code != http.StatusNoContent || len(sb.SMTP.Messages())+len(sb.SMS.Messages()) != 0 {
		t.Fatalf("clear: %d", rec.Code)
	}
	// Waiting for something that never comes ends with the context.
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if _, err := sb.SMS.WaitTo(short, "+19999999999"); err == nil {
		t.Fatal("wait returned without a message")
	}
}
