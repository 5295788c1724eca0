package directory

import (
	"encoding/json"
	"strconv"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/directory"
)

// The mapping between the storage rows (storage and storage/directory) and the API's
// response and command types.

func emailOut(e storage.Email) model.EmailAddress {
	return model.EmailAddress{Address: e.Address, Label: e.Label, VerificationStatus: model.VerificationStatus(e.Status),
		VerifiedAt: e.VerifiedAt, CreatedAt: e.CreatedAt}
}

func phoneOut(p storage.Phone) model.PhoneNumber {
	return model.PhoneNumber{Number: p.Number, Type: model.PhoneType(p.Type), CanText: p.CanText, CanCall: p.CanCall,
		VerificationStatus: model.VerificationStatus(p.Status), VerifiedAt: p.VerifiedAt, CreatedAt: p.CreatedAt}
}

func phoneIn(p model.PhoneNumber) storage.Phone {
	return storage.Phone{Number: p.Number, Type: string(p.Type), CanText: p.CanText, CanCall: p.CanCall}
}

func contactsOut(c store.Contacts) model.ContactInformation {
	return model.ContactInformation{
		Emails:  rest.Items(c.Emails, emailOut),
		Phones:  rest.Items(c.Phones, phoneOut),
		Devices: rest.Items(c.Devices, deviceOf),
	}
}

func groupOut(g store.Group) model.GroupSummary {
	return model.GroupSummary{ID: g.ID, Name: g.Name, Description: g.Description, ParentID: g.ParentID, Path: g.Path,
		Depth: g.Depth, IsPublic: g.IsPublic, MemberCount: g.MemberCount}
}

func groupRefsOut(gs []store.Group) []model.GroupReference {
	out := make([]model.GroupReference, 0, len(gs))
	for _, g := range gs {
		out = append(out, model.GroupReference{ID: strconv.FormatInt(g.ID, 10), Name: g.Name, Path: g.Path, Depth: g.Depth, IsPublic: g.IsPublic})
	}
	return out
}

func userSummariesOut(us []store.UserSummary) []model.UserProfileSummary {
	out := make([]model.UserProfileSummary, 0, len(us))
	for _, u := range us {
		out = append(out, model.UserProfileSummary{
			ID: strconv.FormatInt(u.ID, 10), ExternalID: u.ExternalID,
			Name:              model.PersonName{First: u.FirstName, Middle: u.MiddleName, Last: u.LastName},
			PreferredLanguage: u.Language, TimeZone: u.TimeZone, Emails: u.Emails, Phones: u.Phones, CreatedAt: u.CreatedAt,
		})
	}
	return out
}

func mobileAppsIn(apps []model.MobileApp) []store.MobileApp {
	if apps == nil {
		return nil
	}
	out := make([]store.MobileApp, 0, len(apps))
	for _, a := range apps {
		out = append(out, store.MobileApp(a))
	}
	return out
}

func locationOut(l storage.Location) model.Location {
	out := model.Location{ID: strconv.FormatInt(l.ID, 10), Name: l.Name,
		GeoLocation: model.GeoLocation{Latitude: l.Latitude, Longitude: l.Longitude}, CreatedAt: l.CreatedAt}
	_ = json.Unmarshal(l.Address, &out.Address)
	return out
}

func locationIn(c model.CreateLocationCommand) store.NewLocation {
	l := store.NewLocation{Name: c.Name, Latitude: c.GeoLocation.Latitude, Longitude: c.GeoLocation.Longitude}
	if c.Address != nil {
		l.Address, _ = json.Marshal(c.Address)
	}
	return l
}

func weatherOut(ws []store.Weather) []model.WeatherNotification {
	out := make([]model.WeatherNotification, 0, len(ws))
	for _, w := range ws {
		n := model.WeatherNotification{Category: w.Category, CategoryName: weatherCategoryName(w.Category), CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt}
		for _, c := range w.Channels {
			n.Channels = append(n.Channels, model.WeatherChannel(c))
		}
		if w.LocationID != nil {
			n.LocationID = strconv.FormatInt(*w.LocationID, 10)
		}
		out = append(out, n)
	}
	return out
}

func attemptOut(a store.Attempt) model.VerificationAttempt {
	return model.VerificationAttempt{SentAt: a.SentAt, ExpiresAt: a.ExpiresAt, AttemptsUsed: a.AttemptsUsed, MaxAttempts: a.MaxAttempts,
		Status: model.VerificationStatus(a.Status)}
}

func pendingOut(ps []store.PendingCode) []model.PendingVerificationAttempt {
	out := make([]model.PendingVerificationAttempt, 0, len(ps))
	for _, p := range ps {
		device := model.PendingDeviceType("Email")
		if p.Kind == store.KindPhone {
			device = "Sms"
		}
		out = append(out, model.PendingVerificationAttempt{
			DeviceType: device, Address: p.Address, UserID: strconv.FormatInt(p.UserID, 10), DirectoryID: p.DirectoryID,
			Code: p.Code, AttemptsUsed: p.AttemptsUsed, CreatedAt: p.SentAt, ExpiresAt: p.ExpiresAt,
		})
	}
	return out
}

// deviceOf maps a stored device to its response model.
func deviceOf(d storage.Device) model.ContactInformationDevice {
	return model.ContactInformationDevice{ID: d.ID, App: d.App, Platform: d.Platform, Token: d.Token, CreatedAt: d.CreatedAt}
}
