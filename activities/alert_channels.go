package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/catalog"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
)

// Destinations lists a tenant's destinations of a broadcast-style channel.
type Destinations interface {
	Destinations(ctx context.Context, tenant string, ch channels.Channel) ([]providers.Destination, error)
}

// extraAddresses reads the addresses alert_recipients does not hold: device
// tokens (push, app; several per person) and fax numbers (person_phones
// with phone_type Fax), by person id.
func (a *Activities) extraAddresses(ctx context.Context, tenant string, d channels.Descriptor, recs []storage.BatchRecipient) (map[int64][]string, error) {
	var ids pq.Int64Array
	for _, r := range recs {
		if r.PersonID != nil {
			ids = append(ids, *r.PersonID)
		}
	}
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []storage.PersonAddress
	var err error
	if d.Addresses() == channels.DeviceTokens {
		rows, err = storage.DeviceTokens(ctx, a.DB, tenant, d.App, ids)
	} else {
		rows, err = storage.FaxNumbers(ctx, a.DB, tenant, ids)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s addresses: %w", d.Channel, err)
	}
	for _, r := range rows {
		if d.Addresses() == channels.FaxNumber && len(out[r.PersonID]) > 0 {
			continue
		}
		out[r.PersonID] = append(out[r.PersonID], r.Address)
	}
	return out, nil
}

// options adds the settings of the alert's block of m's channel to m, as
// the channel's catalog entry reads them. The block's texts are rendered by
// Renderer.Message (and the mobile broadcast's by Renderer.BroadcastText),
// so variables are filled in every text a provider receives.
func (r *alertRenderer) options(m *channels.Message) {
	catalog.For(m.Channel).Apply(r.Renderer, r.FileKey, m)
}

// BroadcastRow is one broadcast delivery's latest state.
type BroadcastRow struct {
	Destination, Name, Key, Status, ProviderMessageID, Error string
	Permanent                                                bool
}

// deliverBroadcast delivers a broadcast-style channel once per destination:
// only the alert's first batch of the first cycle does it; the results go
// to alert_broadcasts. Destinations already Sent are not sent again.
func (a *Activities) deliverBroadcast(ctx context.Context, in BatchInput, lastAttempt bool) (BatchOutcome, error) {
	var out BatchOutcome
	if in.Lo != 0 || in.Cycle != 1 {
		return out, nil
	}
	if err := a.checkAlert(ctx, in.AlertRef); err != nil {
		return out, err
	}
	if a.Destinations == nil {
		return out, a.recordBroadcasts(ctx, in, []BroadcastRow{{Destination: in.Channel, Status: storage.DeliveryFailed, Permanent: true,
			Key: alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, 0), Error: "no provider is configured for the " + in.Channel + " channel"}}, &out)
	}
	dests, err := a.Destinations.Destinations(ctx, in.Tenant, channels.Channel(in.Channel))
	if err != nil && !isNoProvider(err) {
		return out, err
	}
	if isNoProvider(err) || len(dests) == 0 {
		return out, a.recordBroadcasts(ctx, in, []BroadcastRow{{Destination: in.Channel, Status: storage.DeliveryFailed, Permanent: true,
			Key: alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, 0), Error: "no provider is configured for the " + in.Channel + " channel"}}, &out)
	}
	r, err := a.rendererFor(ctx, in.AlertRef)
	if err != nil {
		return out, err
	}
	dests = selectDestinations(r.Settings.Channels, catalog.For(channels.Channel(in.Channel)).Select, dests)
	done, err := storage.FinishedBroadcasts(ctx, a.DB, in.Tenant, in.AlertID, in.Channel, in.Cycle)
	if err != nil {
		return out, err
	}
	var msgs []channels.Message
	var rows []BroadcastRow
	for i, d := range dests {
		if slices.Contains(done, d.ID) {
			continue
		}
		m, _ := r.Message(in.Channel, &storage.RecipientRow{}, "")
		r.options(&m)
		m.Key = alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, int64(i)) + ":" + d.ID
		m.To = d.ID
		msgs = append(msgs, m)
		rows = append(rows, BroadcastRow{Destination: d.ID, Name: d.Name, Key: m.Key})
	}
	if len(msgs) == 0 {
		return out, nil
	}
	results, err := a.send(ctx, in, msgs)
	if err != nil && !lastAttempt {
		return out, fmt.Errorf("deliver %s: %w", in.Channel, err)
	}
	temporary := 0
	at := alert.Attempt{Last: lastAttempt, Max: in.MaxAttempts}
	for i := range rows {
		row := &rows[i]
		res := alert.ResultAt(results, err, i)
		o := alert.StatusOf(res, at)
		row.ProviderMessageID, row.Status, row.Permanent, row.Error = res.ProviderMessageID, o.Status, o.Permanent, o.Error
		if o.Status == alert.DeliveryRetrying {
			temporary++
		}
	}
	if err := a.recordBroadcasts(ctx, in, rows, &out); err != nil {
		return out, err
	}
	if temporary > 0 {
		return out, fmt.Errorf("%d temporary failures on %s", temporary, in.Channel)
	}
	return out, nil
}

func isNoProvider(err error) bool { return errors.Is(err, channels.ErrNoProvider) }

// selectDestinations keeps the destinations the channel block names (by id
// or name, as sel reads them); all of them when it names none.
func selectDestinations(c *alert.Channels, sel alert.Selection, all []providers.Destination) []providers.Destination {
	var want []string
	if c != nil && sel != nil {
		want = sel(c)
	}
	if len(want) == 0 {
		return all
	}
	var out []providers.Destination
	for _, d := range all {
		if slices.Contains(want, d.ID) || slices.Contains(want, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

func (a *Activities) recordBroadcasts(ctx context.Context, in BatchInput, rows []BroadcastRow, out *BatchOutcome) error {
	err := a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		for _, r := range rows {
			if err := storage.RecordBroadcast(ctx, tx, storage.BroadcastRecord{Tenant: in.Tenant, AlertID: in.AlertID, Channel: in.Channel, Cycle: in.Cycle,
				Destination: r.Destination, Name: r.Name, Status: r.Status, ProviderMessageID: r.ProviderMessageID, Error: r.Error, Permanent: r.Permanent, Key: r.Key}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		out.count(r.Status)
	}
	return nil
}

// aggregateDevices folds the per-token rows of device channels into one row
// per recipient: Sent when any token took it, Retrying when none did and
// some failure is temporary, Failed otherwise. The address lists the tokens.
func aggregateDevices(rows []storage.DeliveryRow, extra map[int64][]string, recs []storage.BatchRecipient) []storage.DeliveryRow {
	rank := func(st string) int {
		switch st {
		case storage.DeliveryDelivered:
			return 4
		case storage.DeliverySent:
			return 3
		case storage.DeliveryRetrying:
			return 2
		case storage.DeliveryFailed:
			return 1
		}
		return 0
	}
	addr := map[int64]string{}
	for _, r := range recs {
		if r.PersonID != nil {
			addr[r.Seq] = strings.Join(extra[*r.PersonID], ",")
		}
	}
	var out []storage.DeliveryRow
	at := map[int64]int{}
	for _, r := range rows {
		i, ok := at[r.Seq]
		if !ok {
			at[r.Seq] = len(out)
			if a, ok := addr[r.Seq]; ok && r.Status != storage.DeliverySkipped {
				r.Address = a
			}
			out = append(out, r)
			continue
		}
		cur := &out[i]
		if rank(r.Status) > rank(cur.Status) {
			r.Address = cur.Address
			if r.Status == storage.DeliveryFailed || r.Status == storage.DeliveryRetrying {
				r.Error = cur.Error + "; " + r.Error
			}
			*cur = r
		} else if r.Error != "" && rank(cur.Status) <= 2 {
			cur.Error += "; " + r.Error
		}
	}
	return out
}

// syncCalls applies the status callbacks that arrived before the batch's
// rows were written (a call can be answered before the request's answer is
// recorded): answered calls make their rows Delivered, calls that ended
// unanswered with no redial left make them Failed.
func syncCalls(ctx context.Context, tx *sqlx.Tx, in BatchInput, key storage.BatchKey, rows []storage.DeliveryRow) error {
	var keys []string
	for _, r := range rows {
		if r.Status == storage.DeliverySent {
			keys = append(keys, alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, r.Seq))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	n, err := storage.ApplyEarlyCallStatuses(ctx, tx, key, keys)
	if err != nil {
		return err
	}
	if n > 0 {
		return storage.RecountBatch(ctx, tx, key)
	}
	return nil
}

// alertRenderer is an alert's renderer with the object keys of the stored
// files its channel blocks name (resolveFiles).
type alertRenderer struct {
	*alert.Renderer
	// files maps use and name of the stored files the channel blocks name
	// to their object keys (see FileKey).
	files map[string]string
	// attachmentFailure, when set, is the result of every delivery that
	// carries the alert's attachments: the file store could not be read
	// (loadAttachments).
	attachmentFailure *channels.Result
	// attachmentsLeftOut, when set, says which attachments no longer
	// exist: the messages that carry the attachments go without them, and
	// their deliveries say so.
	attachmentsLeftOut string
}

// FileKey is the object key of the version of the tenant's stored file
// name that use needs: name is the file's full name (folder/name, as the
// files operations name it) or, when only one file has it, its name
// without the folder; an object key under the tenant's prefix is used as
// it is (alerts accepted before names were checked). A name that matches
// no stored file any more (deleted after the alert was accepted) is read
// from the tenant's prefix, where the channel reports it missing.
func (r *alertRenderer) FileKey(use, name string) string {
	if name == "" {
		return ""
	}
	if strings.HasPrefix(name, storage.TenantKey(r.Tenant, "")) {
		return name
	}
	if k := r.files[use+"\x00"+name]; k != "" {
		return k
	}
	return storage.TenantKey(r.Tenant, name)
}

// resolveFiles finds the object keys of the stored files the alert's
// channel blocks name (FileKey), in one query, as the alert's validation
// did (catalog.Resolve). A file deleted since is left out: its channel
// reports it missing.
func (a *Activities) resolveFiles(ctx context.Context, r *alertRenderer) error {
	named := catalog.NamedFiles(r.Settings.Channels)
	if len(named) == 0 {
		return nil
	}
	// Stored names are in NFC; an alert accepted before they were may
	// name its files in another form.
	var wanted pq.StringArray
	for _, f := range named {
		wanted = append(wanted, names.Normal(f.Name))
	}
	rows, err := storage.FileAssetsNamed(ctx, a.DB, r.Tenant, wanted)
	if err != nil {
		return err
	}
	r.files = map[string]string{}
	for _, f := range named {
		if k, err := catalog.Resolve(f.Use, names.Normal(f.Name), rows); err == nil {
			r.files[f.Use+"\x00"+f.Name] = k
		}
	}
	return nil
}
