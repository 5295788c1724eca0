// Package directory serves the user directory: profiles, contact information with verification, notification preferences, groups and metadata.
package directory

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// Register adds the directory operations to api.
func Register(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{ID: "usersCreate", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreate")
		})
	rest.Register(api, rest.Op{ID: "usersGetById", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetById")
		})
	rest.Register(api, rest.Op{ID: "usersUpdate", Method: http.MethodPut, Path: "/{tenantId}/directory/{directoryId}/users/{userId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersUpdate")
		})
	rest.Register(api, rest.Op{ID: "usersDelete", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersDelete")
		})
	rest.Register(api, rest.Op{ID: "usersFindUsersByQuery", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/query", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersFindUsersByQuery")
		})
	rest.Register(api, rest.Op{ID: "usersCreateExternalId", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/externalId", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateExternalId")
		})
	rest.Register(api, rest.Op{ID: "usersGetContactInformationById", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetContactInformationById")
		})
	rest.Register(api, rest.Op{ID: "usersGetNotificationPreferencesById", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetNotificationPreferencesById")
		})
	rest.Register(api, rest.Op{ID: "usersCreateNewEmail", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateNewEmail")
		})
	rest.Register(api, rest.Op{ID: "usersGetEmail", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId     string `path:"tenantId"`
			DirectoryId  string `path:"directoryId"`
			UserId       string `path:"userId"`
			EmailAddress string `path:"emailAddress"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetEmail")
		})
	rest.Register(api, rest.Op{ID: "usersRemoveEmail", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId     string `path:"tenantId"`
			DirectoryId  string `path:"directoryId"`
			UserId       string `path:"userId"`
			EmailAddress string `path:"emailAddress"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersRemoveEmail")
		})
	rest.Register(api, rest.Op{ID: "usersCreateEmailVerificationNonce", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}/verification/nonce", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId     string `path:"tenantId"`
			DirectoryId  string `path:"directoryId"`
			UserId       string `path:"userId"`
			EmailAddress string `path:"emailAddress"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateEmailVerificationNonce")
		})
	rest.Register(api, rest.Op{ID: "usersResendEmailVerification", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}/verification/resend", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId     string `path:"tenantId"`
			DirectoryId  string `path:"directoryId"`
			UserId       string `path:"userId"`
			EmailAddress string `path:"emailAddress"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersResendEmailVerification")
		})
	rest.Register(api, rest.Op{ID: "usersVerifyEmail", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/emails/{emailAddress}/verification/verify", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId     string `path:"tenantId"`
			DirectoryId  string `path:"directoryId"`
			UserId       string `path:"userId"`
			EmailAddress string `path:"emailAddress"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersVerifyEmail")
		})
	rest.Register(api, rest.Op{ID: "usersCreateNewPhone", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateNewPhone")
		})
	rest.Register(api, rest.Op{ID: "usersGetPhone", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			PhoneNumber string `path:"phoneNumber"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetPhone")
		})
	rest.Register(api, rest.Op{ID: "usersRemovePhone", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			PhoneNumber string `path:"phoneNumber"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersRemovePhone")
		})
	rest.Register(api, rest.Op{ID: "usersCreatePhoneVerificationNonce", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}/verification/nonce", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			PhoneNumber string `path:"phoneNumber"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreatePhoneVerificationNonce")
		})
	rest.Register(api, rest.Op{ID: "usersResendPhoneVerification", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}/verification/resend", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			PhoneNumber string `path:"phoneNumber"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersResendPhoneVerification")
		})
	rest.Register(api, rest.Op{ID: "usersVerifyPhone", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/contact/phones/{phoneNumber}/verification/verify", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			PhoneNumber string `path:"phoneNumber"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersVerifyPhone")
		})
	rest.Register(api, rest.Op{ID: "usersCreateGroupMembership", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/memberships", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateGroupMembership")
		})
	rest.Register(api, rest.Op{ID: "usersRemoveGroupMembership", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/memberships/{groupId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			GroupId     string `path:"groupId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersRemoveGroupMembership")
		})
	rest.Register(api, rest.Op{ID: "usersCreateNewLocation", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/locations", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersCreateNewLocation")
		})
	rest.Register(api, rest.Op{ID: "usersGetLocation", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/locations/{locationId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			LocationId  string `path:"locationId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetLocation")
		})
	rest.Register(api, rest.Op{ID: "usersRemoveLocation", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/locations/{locationId}", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
			LocationId  string `path:"locationId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersRemoveLocation")
		})
	rest.Register(api, rest.Op{ID: "usersAddWeatherNotifications", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/weather", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersAddWeatherNotifications")
		})
	rest.Register(api, rest.Op{ID: "usersGetWeatherNotifications", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/weather", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersGetWeatherNotifications")
		})
	rest.Register(api, rest.Op{ID: "usersRemoveWeatherNotifications", Method: http.MethodDelete, Path: "/{tenantId}/directory/{directoryId}/users/{userId}/notifications/weather", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			UserId      string `path:"userId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("usersRemoveWeatherNotifications")
		})
	rest.Register(api, rest.Op{ID: "groupsDiscoverAvailableGroups", Method: http.MethodGet, Path: "/{tenantId}/directory/{directoryId}/groups/discover", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("groupsDiscoverAvailableGroups")
		})
	rest.Register(api, rest.Op{ID: "groupsFindGroups", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/groups/find", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("groupsFindGroups")
		})
	rest.Register(api, rest.Op{ID: "groupsGetGroupMembership", Method: http.MethodPost, Path: "/{tenantId}/directory/{directoryId}/groups/{groupId}/members", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId    string `path:"tenantId"`
			DirectoryId string `path:"directoryId"`
			GroupId     string `path:"groupId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("groupsGetGroupMembership")
		})
	rest.Register(api, rest.Op{ID: "metaGetLanguages", Method: http.MethodGet, Path: "/{tenantId}/directory/meta/languages", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId string `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("metaGetLanguages")
		})
	rest.Register(api, rest.Op{ID: "metaGetTimeZones", Method: http.MethodGet, Path: "/{tenantId}/directory/meta/timezones", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId string `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("metaGetTimeZones")
		})
	rest.Register(api, rest.Op{ID: "metaGetWeatherCategories", Method: http.MethodGet, Path: "/{tenantId}/directory/meta/weather/categories", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId string `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("metaGetWeatherCategories")
		})
	rest.Register(api, rest.Op{ID: "testGetPendingEmailVerifications", Method: http.MethodGet, Path: "/{tenantId}/testing/verifications/email", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId string `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("testGetPendingEmailVerifications")
		})
	rest.Register(api, rest.Op{ID: "testGetPendingPhoneVerifications", Method: http.MethodGet, Path: "/{tenantId}/testing/verifications/phone", Scope: "directory:public", Tags: []string{"Directory"}},
		func(ctx context.Context, in *struct {
			TenantId string `path:"tenantId"`
		}) (*struct{}, error) {
			return nil, rest.NotImplemented("testGetPendingPhoneVerifications")
		})
}
