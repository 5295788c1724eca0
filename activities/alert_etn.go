package activities

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/storage"
)

// etnAreas are the ETN areas of an alert: its recipients' areas (circles
// and the outer rings of polygons).
func etnAreas(s *alert.Settings) []etn.Area {
	var out []etn.Area
	for _, a := range s.Recipients.Areas {
		if a.Center != nil && a.RadiusMeters > 0 {
			out = append(out, etn.Area{Center: &etn.LatLng{Lat: a.Center.Lat, Lng: a.Center.Lng}, RadiusMeters: a.RadiusMeters})
		}
		if a.Geometry == nil {
			continue
		}
		for _, f := range a.Geometry.Features {
			var polys [][][][2]float64
			switch f.Geometry.Type {
			case "Polygon":
				var p [][][2]float64
				if json.Unmarshal(f.Geometry.Coordinates, &p) == nil {
					polys = append(polys, p)
				}
			case "MultiPolygon":
				_ = json.Unmarshal(f.Geometry.Coordinates, &polys)
			}
			for _, p := range polys {
				if len(p) == 0 {
					continue
				}
				var ring []etn.LatLng
				for _, pos := range p[0] {
					ring = append(ring, etn.LatLng{Lat: pos[1], Lng: pos[0]})
				}
				out = append(out, etn.Area{Polygon: ring})
			}
		}
	}
	return out
}

// deliverEtnArea calls every number inside an alert's areas: the first
// batch of the first cycle stores the targets (once) and calls those
// without a final status in pages, recording each call on its target row.
func (a *Activities) deliverEtnArea(ctx context.Context, in BatchInput, r *alertRenderer, areas []etn.Area, lastAttempt bool) (BatchOutcome, error) {
	var out BatchOutcome
	if in.Lo != 0 || in.Cycle != 1 {
		return out, nil
	}
	var lists []string
	if c := r.Settings.Channels; c != nil && c.Etn != nil {
		lists = c.Etn.AddressPointLists
	}
	err := a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM alert_etn_targets WHERE tenant_id = $1 AND alert_id = $2`, in.Tenant, in.AlertID); err != nil {
			return fmt.Errorf("count etn targets: %w", err)
		}
		if n > 0 {
			return nil
		}
		for _, ar := range areas {
			if err := ar.Validate(); err != nil {
				continue
			}
			q, arg := etn.TargetsSQL(ar)
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO alert_etn_targets (tenant_id, alert_id, seq, phone, source, person_id, name, latitude, longitude)
				SELECT $1, $4, coalesce((SELECT max(seq) FROM alert_etn_targets WHERE alert_id = $4), 0) + row_number() OVER (ORDER BY phone),
					phone, source, person_id, name, latitude, longitude
				FROM (`+q+`) t WHERE NOT EXISTS (SELECT 1 FROM alert_etn_targets x WHERE x.alert_id = $4 AND x.phone = t.phone)`,
				in.Tenant, arg, pq.Array(lists), in.AlertID); err != nil {
				return fmt.Errorf("store etn targets: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	temporary := 0
	var after int64
	for {
		var targets []struct {
			Seq   int64  `db:"seq"`
			Phone string `db:"phone"`
			Name  string `db:"name"`
		}
		if err := a.DB.SelectContext(ctx, &targets, `SELECT seq, phone, name FROM alert_etn_targets
			WHERE tenant_id = $1 AND alert_id = $2 AND seq > $3 AND status IN ('Pending', 'Retrying') ORDER BY seq LIMIT 100`,
			in.Tenant, in.AlertID, after); err != nil {
			return out, fmt.Errorf("read etn targets: %w", err)
		}
		if len(targets) == 0 {
			break
		}
		msgs := make([]channels.Message, len(targets))
		for i, t := range targets {
			m := r.Message(in.Channel, &storage.RecipientRow{FirstName: t.Name, VoicePhone: &targets[i].Phone}, "")
			channelMetadata(r, in.Channel, &m)
			m.Key = alert.DeliveryKey(in.Tenant, in.AlertID, in.Channel, in.Cycle, t.Seq)
			m.To = t.Phone
			msgs[i] = m
			after = t.Seq
		}
		results, err := a.send(ctx, in, msgs)
		if err != nil && !lastAttempt {
			return out, fmt.Errorf("deliver etn: %w", err)
		}
		seqs := make(pq.Int64Array, len(targets))
		statuses := make(pq.StringArray, len(targets))
		pids := make(pq.StringArray, len(targets))
		errs := make(pq.StringArray, len(targets))
		at := alert.Attempt{Last: lastAttempt, Max: in.MaxAttempts}
		for i, t := range targets {
			seqs[i] = t.Seq
			res := alert.ResultAt(results, err, i)
			o := alert.StatusOf(res, at)
			pids[i], statuses[i], errs[i] = res.ProviderMessageID, o.Status, o.Error
			switch o.Status {
			case alert.DeliverySent, alert.DeliveryDelivered:
				out.Sent++
			case alert.DeliveryFailed:
				out.Failed++
			default:
				out.Retrying++
				temporary++
			}
		}
		if _, err := a.DB.ExecContext(ctx, `
			UPDATE alert_etn_targets t SET status = CASE WHEN t.status IN ('Delivered', 'Failed') THEN t.status ELSE u.status END,
				provider_message_id = u.pid, error = u.err, attempts = t.attempts + 1,
				sent_at = CASE WHEN u.status = 'Sent' THEN coalesce(t.sent_at, now()) ELSE t.sent_at END, updated_at = now()
			FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(seq, status, pid, err)
			WHERE t.tenant_id = $1 AND t.alert_id = $2 AND t.seq = u.seq`,
			in.Tenant, in.AlertID, seqs, statuses, pids, errs); err != nil {
			return out, fmt.Errorf("record etn calls: %w", err)
		}
		// Callbacks that overtook the recording.
		if _, err := a.DB.ExecContext(ctx, `
			UPDATE alert_etn_targets t SET
				status = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN 'Delivered' ELSE 'Failed' END,
				delivered_at = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN c.updated_at END, updated_at = now()
			FROM voice_calls c
			WHERE c.tenant_id = $1 AND c.alert_id = $2 AND c.channel = 'etn' AND t.alert_id = $2 AND t.seq = ANY($3)
				AND c.call_key = 'alert-' || $1 || '-' || $2 || ':etn:1:' || t.seq AND t.status = 'Sent'
				AND (c.status IN ('Answered', 'Confirmed') OR (c.status IN ('Busy', 'NoAnswer', 'Failed') AND c.next_attempt_at IS NULL))`,
			in.Tenant, in.AlertID, seqs); err != nil {
			return out, fmt.Errorf("apply early etn call statuses: %w", err)
		}
	}
	if temporary > 0 {
		return out, fmt.Errorf("%d temporary failures on etn", temporary)
	}
	return out, nil
}
