package model

import (
	"time"

	"github.com/tocsin/tocsin/api/rest"
)

// ChannelProviderSettings configures a tenant's providers of one channel.
// Secrets (tokens, signing secrets, provider and webhook URLs) are stored
// encrypted and come back masked ("****" and at most the last four
// characters; a URL keeps its scheme, host and port); a masked value sent
// back unchanged keeps the stored secret while the URL it is sent to keeps
// its destination (scheme, host, port, path and query parameters).
type ChannelProviderSettings struct {
	Providers          []ChannelProvider `json:"providers,omitempty" maxItems:"2" doc:"The primary provider and, optionally, a fallback tried for what the primary cannot deliver (unreachable, or refusing a message permanently). Every channel but teamChat needs one."`
	RatePerSecond      float64           `json:"ratePerSecond,omitempty" minimum:"0" maximum:"100000" doc:"Messages per second on this channel for the tenant; 0 means no limit." example:"50"`
	Burst              int               `json:"burst,omitempty" minimum:"0" maximum:"100000" doc:"Messages sent at once within the rate; defaults to the rate." example:"50"`
	MaxConcurrentCalls int               `json:"maxConcurrentCalls,omitempty" minimum:"0" maximum:"1000" doc:"etn only: calls in progress at once for the tenant, across all alerts and workers (default 10)." example:"10"`
	Targets            []TeamChatTarget  `json:"targets,omitempty" maxItems:"50" doc:"teamChat only: the incoming webhooks alerts can be posted to."`
	Accounts           []ChannelAccount  `json:"accounts,omitempty" maxItems:"100" doc:"socialPostA, socialPostB and neighborhood: the tenant's accounts on the network."`
}

// ChannelProvider is one provider's address and credentials.
type ChannelProvider struct {
	Name          string `json:"name,omitempty" maxLength:"100" doc:"A label for the provider." example:"primary"`
	URL           string `json:"url" format:"uri" maxLength:"2000" doc:"The provider's base URL (voice and etn: calls go to {url}/calls; push: {url}/push/send; fax: {url}/faxes; eas and mobileBroadcast: the CAP endpoint itself; social and neighborhood: the network's API). Some providers take their API key in the URL, so answers mask every part of it that can carry one, each as \"****\" and at most its last four characters: the user and password, each path segment, each query value (a query item without a value whole) and the fragment; the scheme, host, port and the names of query values stay. A masked URL sent back unchanged keeps the stored one; any other URL holding a mask is a 400 naming it. The host is an IP address or a valid DNS name, as for hook targets (an internationalized name is stored in its ASCII form)." example:"https://voice.example.com/v1"`
	Token         string `json:"token,omitempty" maxLength:"4000" doc:"The provider's API token, sent as a bearer token (secret; masked in answers; a masked token sent back is kept only while url keeps its scheme, host, port, path and query parameters). Not used by the social and neighborhood networks, whose accounts carry their own tokens." example:"sk_live_51Hx"`
	SigningSecret string `json:"signingSecret,omitempty" maxLength:"200" doc:"voice and etn: the secret the provider signs status callbacks with (HMAC-SHA256, see receiveCallStatus; masked in answers; a masked secret sent back is kept only while url keeps its scheme, host, port, path and query parameters)." example:"whsec_6f2d9c0b7a1e4f3d"`
	From          string `json:"from,omitempty" maxLength:"16" doc:"voice and etn: the E.164 caller id; fax: the sending fax number." example:"+15550001000"`
	SenderID      string `json:"senderId,omitempty" maxLength:"200" doc:"eas and mobileBroadcast: the CAP sender (default tocsin)." example:"oem@county.example"`
}

// TeamChatTarget is a team-chat incoming webhook.
type TeamChatTarget struct {
	Name  string `json:"name" minLength:"1" maxLength:"100" pattern:"^[A-Za-z0-9][A-Za-z0-9 ._@:-]*$" doc:"The target's name; a teamChat channel block names the targets to post to." example:"ops-room"`
	URL   string `json:"url" format:"uri" maxLength:"2000" doc:"The incoming-webhook URL (secret; answered masked as provider URLs are, so it shows its scheme, host and port and at most the last four characters of each path segment and query value; a masked URL sent back unchanged keeps the stored one, any other URL holding a mask is a 400 naming it). The host is an IP address or a valid DNS name, as for hook targets (an internationalized name is stored in its ASCII form)." example:"https://hooks.chat.example/services/T000/B000/XXXX"`
	Style string `json:"style" enum:"slack,teams" doc:"The payload style: slack (text and blocks) or teams (a message with an Adaptive Card)." example:"slack"`
}

// ChannelAccount is an account on a social or neighborhood network.
type ChannelAccount struct {
	ID     string                `json:"id" minLength:"1" maxLength:"100" pattern:"^[A-Za-z0-9][A-Za-z0-9 ._@:-]*$" doc:"The account's id on the network." example:"county-oem"`
	Name   string                `json:"name" minLength:"1" maxLength:"200" doc:"The account's display name." example:"County Emergency Management"`
	Token  string                `json:"token" minLength:"1" maxLength:"4000" doc:"The account's access token (secret; masked in answers; a masked token sent back is kept only while every provider url is one stored before, the same scheme, host, port, path and query parameters)." example:"EAAB8aZ"`
	Groups []ChannelAccountGroup `json:"groups,omitempty" maxItems:"500" doc:"neighborhood only: the groups the account posts to."`
}

// ChannelAccountGroup is a neighborhood group of an account.
type ChannelAccountGroup struct {
	ID   string `json:"id" minLength:"1" maxLength:"100" doc:"The group's id on the network." example:"g-1029"`
	Name string `json:"name" minLength:"1" maxLength:"200" doc:"The group's name." example:"Northside"`
}

// ChannelProviderSettingsResponse is a channel's stored settings, masked.
type ChannelProviderSettingsResponse struct {
	Channel   string                  `json:"channel" doc:"The channel." example:"voice"`
	Settings  ChannelProviderSettings `json:"settings" doc:"The settings with secrets masked."`
	CreatedAt time.Time               `json:"createdAt" doc:"When the channel was first configured."`
	UpdatedAt time.Time               `json:"updatedAt" doc:"When the settings last changed."`
}

// ChannelProviderSettingsList lists a tenant's configured channels.
type ChannelProviderSettingsList struct {
	Items []ChannelProviderSettingsResponse `json:"items" doc:"Every configured channel, by name."`
}

// VoiceStatusCallback is what a voice provider posts about a call.
type VoiceStatusCallback struct {
	CallID          string `json:"callId" maxLength:"200" doc:"The provider's id of the call." example:"CA3f2b"`
	Reference       string `json:"reference" maxLength:"400" doc:"The reference tocsin sent with the call request." example:"alert-1001-42-k3x7q2ab:voice:1:17"`
	Status          string `json:"status" enum:"answered,busy,no-answer,failed" doc:"What happened to the call." example:"answered"`
	AnsweredBy      string `json:"answeredBy,omitempty" enum:"human,machine" doc:"Who answered an answered call." example:"human"`
	Digits          string `json:"digits,omitempty" maxLength:"20" doc:"Digits the callee pressed; 1 confirms a call that asked for confirmation." example:"1"`
	DurationSeconds int    `json:"durationSeconds,omitempty" minimum:"0" doc:"Length of an answered call." example:"34"`
	Error           string `json:"error,omitempty" maxLength:"1000" doc:"The provider's reason for a failed call."`
}

// EtnAddressPointImportResult is the outcome of importing an address-point list.
type EtnAddressPointImportResult struct {
	ListName string                    `json:"listName" doc:"The list." example:"wells"`
	Imported int                       `json:"imported" doc:"Points now in the list." example:"1200"`
	Rejected int                       `json:"rejected" doc:"Rows left out." example:"2"`
	Errors   []EtnAddressPointRowError `json:"errors" doc:"Why each rejected row was left out (at most 100 listed)."`
}

// EtnAddressPointRowError is a CSV row that was not imported.
type EtnAddressPointRowError struct {
	Line    int    `json:"line" doc:"The CSV line the row starts on, counting the header as 1 (empty lines and line breaks inside quoted fields count)." example:"14"`
	Message string `json:"message" doc:"What is wrong with it." example:"phone \"555\" is not an E.164 number"`
}

// EtnAddressPointList describes an imported list.
type EtnAddressPointList struct {
	ListName   string    `json:"listName" doc:"The list's name." example:"wells"`
	Points     int       `json:"points" doc:"Points in the list." example:"1200"`
	ImportedAt time.Time `json:"importedAt" doc:"When the list was imported."`
}

// EtnAddressPointListsResponse is a page of the tenant's address-point lists.
type EtnAddressPointListsResponse struct {
	rest.Paging
	Items []EtnAddressPointList `json:"items" doc:"The lists of this page, by name unless sort says otherwise."`
}
