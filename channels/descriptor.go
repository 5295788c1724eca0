package channels

// Addressing says whom a channel's messages of an alert go to.
type Addressing int

// The ways a channel is addressed.
const (
	// PerRecipient: one message per recipient of the alert, to the address
	// its Addresses say, in the alert's recipient batches.
	PerRecipient Addressing = iota
	// PerDevice: one message per device token of the recipient (of the
	// Descriptor's App); the recipient's delivery row aggregates them.
	PerDevice
	// PerDestination: once per alert to each of the tenant's configured
	// destinations (accounts, targets, the CAP endpoint), by the first batch
	// of the first cycle; results go to the alert's broadcasts.
	PerDestination
	// PerArea: once per number inside the alert's areas, by the first batch
	// of the first cycle, when the alert has areas; PerRecipient otherwise.
	PerArea
)

// Addresses says where a recipient's address on a channel is read.
type Addresses int

// The sources of addresses.
const (
	// NoAddresses: the channel is not addressed per recipient
	// (PerDestination).
	NoAddresses Addresses = iota
	// RecipientEmail, RecipientPhone and RecipientVoicePhone: the address
	// the alert's recipient row holds.
	RecipientEmail
	RecipientPhone
	RecipientVoicePhone
	// DeviceTokens: the person's device tokens of the Descriptor's App.
	DeviceTokens
	// FaxNumber: the person's first fax number.
	FaxNumber
)

// Addressing says whom ch's messages of an alert go to. With Addresses it
// is the one statement of how each channel is addressed, which the
// descriptors (Descriptor.Addressing) and the alert package
// (alert.AddressOf, alert.IsBroadcast) read. A channel tocsin does not
// know is PerRecipient.
func (ch Channel) Addressing() Addressing {
	switch ch {
	case Push, MyAlertsApp:
		return PerDevice
	case Etn:
		return PerArea
	case Eas, MobileBroadcast, TeamChat, SocialPostA, SocialPostB, Neighborhood:
		return PerDestination
	}
	return PerRecipient
}

// Addresses says where a recipient's address on ch is read: NoAddresses
// for the PerDestination channels and a channel tocsin does not know (its
// recipients have no address).
func (ch Channel) Addresses() Addresses {
	switch ch {
	case Email:
		return RecipientEmail
	case Text:
		return RecipientPhone
	case Voice, Etn:
		return RecipientVoicePhone
	case Push, MyAlertsApp:
		return DeviceTokens
	case Fax:
		return FaxNumber
	}
	return NoAddresses
}

// Descriptor says how a channel is addressed and batched. Each channel's
// package exports its own.
type Descriptor struct {
	Channel Channel
	// App is the device app (person_devices.app) of DeviceTokens.
	App string
	// Calls marks a channel that places calls: their status callbacks may
	// arrive before the batch's rows are written and wait for them.
	Calls bool
	// WorkerRate marks a channel without per-tenant provider settings,
	// throttled by the worker's configured delivery rate instead.
	WorkerRate bool
}

// Addressing is the channel's (Channel.Addressing).
func (d Descriptor) Addressing() Addressing { return d.Channel.Addressing() }

// Addresses is the channel's (Channel.Addresses).
func (d Descriptor) Addresses() Addresses { return d.Channel.Addresses() }

// Find returns the destination of a PerDestination channel (account,
// webhook target) that a message's To names: the one of dests whose name,
// as name reads it, is to.
func Find[D any](dests []D, to string, name func(D) string) (D, bool) {
	for _, d := range dests {
		if name(d) == to {
			return d, true
		}
	}
	var none D
	return none, false
}
