// Package channelstate keeps what channels record about their own work:
// voice and ETN calls, ETN call slots and address points, CAP messages,
// neighborhood post statuses and push device tokens. It returns its own
// rows; the channel packages map them to their types.
package channelstate
