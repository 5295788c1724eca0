// Package channelstate keeps what channels record about their own work:
// voice and ETN calls, ETN call slots and address points, CAP messages,
// neighborhood post statuses and push device tokens. Its rows are the
// channel packages' types too (voice.Call, cap.Message, etn.Point, ...
// are aliases of them): one declaration of each.
package channelstate
