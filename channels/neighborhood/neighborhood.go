// Package neighborhood posts alerts to the neighborhood network: each of
// the tenant's agency accounts posts to its neighborhood groups through the
// network's HTTP API, which answers per group. The per account and group
// outcome is stored for getNeighborhoodChannelStatus.
package neighborhood

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Options are the settings of a neighborhood post (its
// channels.Message.Options).
type Options struct {
	// Groups are the ids of the groups to post to; all of the account's
	// configured groups when empty.
	Groups []string
	// Urgent marks the post urgent.
	Urgent bool
}

// Group statuses.
const (
	StatusPosted = "Posted"
	StatusFailed = "Failed"
)

// Group is a neighborhood group of an account.
type Group struct {
	ID, Name string
}

// Account is an agency account with its groups.
type Account struct {
	ID, Name, Token string
	Groups          []Group
}

// PostRequest is the network's request body.
type PostRequest struct {
	Subject  string   `json:"subject"`
	Body     string   `json:"body"`
	GroupIDs []string `json:"groupIds"`
	Urgent   bool     `json:"urgent"`
}

// GroupResult is the network's answer for one group.
type GroupResult struct {
	GroupID string `json:"groupId"`
	Status  string `json:"status"`
	PostID  string `json:"postId,omitempty"`
	Error   string `json:"error,omitempty"`
}

// PostResponse is the network's answer.
type PostResponse struct {
	Results []GroupResult `json:"results"`
}

// Status is the outcome of one account and group.
type Status = channelstate.NeighborhoodStatus

// Recorder stores statuses.
type Recorder interface {
	Record(ctx context.Context, st []Status) error
}

// Sender posts to the neighborhood network through its API at Endpoint,
// the messages of a batch one after the other; a post carries its
// account's token instead of Endpoint.Token.
type Sender struct {
	providerhttp.Endpoint
	Accounts []Account
	Statuses Recorder
}

// Send implements channels.Sender: a message's To is an account id. The
// result is Delivered when at least one group got the post.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	out := make([]channels.Result, len(msgs))
	var all []Status
	for i, m := range msgs {
		r, st := s.post(ctx, m)
		out[i] = r
		all = append(all, st...)
	}
	if s.Statuses != nil && len(all) > 0 {
		if err := s.Statuses.Record(ctx, all); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Sender) post(ctx context.Context, msg channels.Message) (channels.Result, []Status) {
	acct, ok := channels.Find(s.Accounts, msg.To, func(a Account) string { return a.ID })
	if !ok {
		return providerhttp.Refused(msg.Key, fmt.Sprintf("no neighborhood account %q", msg.To)), nil
	}
	o := channels.OptionsOf[Options](msg)
	groups := acct.Groups
	if want := o.Groups; len(want) > 0 {
		groups = slices.DeleteFunc(slices.Clone(groups), func(g Group) bool { return !slices.Contains(want, g.ID) })
	}
	if len(groups) == 0 {
		return providerhttp.Refused(msg.Key, "the account has none of the groups asked for"), nil
	}
	alertID := msg.Alert()
	names := map[string]string{}
	req := PostRequest{Subject: msg.Subject, Body: msg.Text, Urgent: o.Urgent}
	for _, g := range groups {
		req.GroupIDs = append(req.GroupIDs, g.ID)
		names[g.ID] = g.Name
	}
	status := func(gid, st, post, errText string) Status {
		return Status{Tenant: msg.Tenant, AlertID: alertID, MessageKey: msg.Key, AccountID: acct.ID, AccountName: acct.Name,
			GroupID: gid, GroupName: names[gid], Status: st, PostID: post, Error: errText}
	}
	var pr PostResponse
	if err := s.As(acct.Token).Post(ctx, "/v1/accounts/"+url.PathEscape(acct.ID)+"/posts", providerhttp.Request{JSON: req}, msg.Key, &pr); err != nil {
		var st []Status
		for _, g := range groups {
			st = append(st, status(g.ID, StatusFailed, "", err.Error()))
		}
		return providerhttp.Failed(msg.Key, err), st
	}
	var st []Status
	posted := 0
	answered := map[string]bool{}
	for _, gr := range pr.Results {
		if _, ok := names[gr.GroupID]; !ok {
			continue
		}
		answered[gr.GroupID] = true
		if gr.Status == "posted" {
			posted++
			st = append(st, status(gr.GroupID, StatusPosted, gr.PostID, ""))
		} else {
			reason := "the network refused the post"
			if providerhttp.IsCode(gr.Error) {
				reason = gr.Error
			}
			st = append(st, status(gr.GroupID, StatusFailed, "", reason))
		}
	}
	for _, g := range groups {
		if !answered[g.ID] {
			st = append(st, status(g.ID, StatusFailed, "", "the network did not answer for the group"))
		}
	}
	if posted == 0 {
		return providerhttp.Refused(msg.Key, "no group got the post"), st
	}
	return channels.Result{Key: msg.Key, Outcome: channels.Delivered, ProviderMessageID: fmt.Sprintf("%d/%d groups", posted, len(groups))}, st
}

// Statuses is the PostgreSQL store of statuses: Record writes a batch's
// with one statement, ForAlert reads a page of an alert's in an order
// built from SortColumns.
type Statuses = channelstate.NeighborhoodStatuses

var _ Recorder = (*Statuses)(nil)

// SortColumns are the sort properties of statuses and their columns.
var SortColumns = map[string]string{
	"accountname": "lower(account_name)",
	"groupname":   "lower(group_name)",
	"status":      "status",
	"updatedat":   "updated_at",
}
