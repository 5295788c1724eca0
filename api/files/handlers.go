package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/api/files/fileservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/files"
)

// URLLifetime is how long presigned download URLs work.
const URLLifetime = 15 * time.Minute

func details(raw []byte) model.FileDetails {
	var d media.Details
	_ = json.Unmarshal(raw, &d)
	return model.FileDetails{
		Format: d.Format, Width: d.Width, Height: d.Height, DurationMs: d.DurationMs,
		SampleRate: d.SampleRate, Channels: d.Channels, BitsPerSample: d.BitsPerSample,
	}
}

// fileWithKeys is a FileModel and the object key of each asset, in order.
type fileWithKeys struct {
	model.FileModel
	keys []string
}

// modelOf maps a stored file to its FileModel.
func modelOf(f store.File) fileWithKeys {
	m := fileWithKeys{FileModel: model.FileModel{
		FileName: f.FullName, Name: f.FileName, FolderName: f.FolderName, Kind: model.FileKind(f.Kind),
		ContentType: f.ContentType, SizeBytes: f.SizeBytes, Sha256: f.SHA256, Description: f.Description,
		Details: details(f.Details), Assets: []model.AssetInformation{}, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt,
	}}
	for _, a := range f.Assets {
		m.Assets = append(m.Assets, model.AssetInformation{
			Kind: model.AssetKind(a.Kind), ContentType: a.ContentType, SizeBytes: a.SizeBytes, Sha256: a.SHA256, Details: details(a.Details),
		})
		m.keys = append(m.keys, a.Key)
	}
	return m
}

// load returns one file by full name, with its object keys.
func (h *handlers) load(ctx context.Context, tenant, full string) (fileWithKeys, error) {
	f, err := h.files.Get(ctx, tenant, full)
	if err != nil {
		return fileWithKeys{}, err
	}
	return modelOf(f), nil
}

// sign adds presigned URLs to the assets of m: to all of them, or to audio
// files' only when all is false.
func (h *handlers) sign(ctx context.Context, m *fileWithKeys, all bool) error {
	if !all && m.Kind != "audio" {
		return nil
	}
	expires := time.Now().Add(URLLifetime).UTC().Truncate(time.Second)
	for i := range m.Assets {
		u, err := h.d.Objects.Client.PresignedGetObject(ctx, h.d.Objects.Bucket, m.keys[i], URLLifetime, url.Values{})
		if err != nil {
			return rest.Unavailable("the object store", err)
		}
		m.Assets[i].URL = u.String()
		m.Assets[i].URLExpiresAt = &expires
	}
	return nil
}

func pathName(raw string) (string, error) {
	full, err := url.PathUnescape(raw)
	if err != nil {
		return "", rest.Invalid("path", "FileName", "bad URL encoding", raw)
	}
	full = names.Normal(full)
	if err := fileservice.CheckLookup(full); err != nil {
		return "", rest.Invalid("path", "FileName", err.Error(), full)
	}
	return full, nil
}

func notFound(err error) error {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return rest.NotFound("file")
	case errors.Is(err, store.ErrObjectStore):
		return rest.Unavailable("the object store", err)
	}
	return err
}

func (h *handlers) get(ctx context.Context, in *FilePath) (*rest.Output[model.FileModel], error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	m, err := h.load(ctx, rest.Tenant(ctx), full)
	if err != nil {
		return nil, notFound(err)
	}
	if err := h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return rest.Answer(m.FileModel), nil
}

type listInput struct {
	TenantID         int64          `path:"tenantId" doc:"The tenant; must be the token's." example:"1001"`
	IncludeAudioUrls bool           `query:"IncludeAudioUrls" default:"false" doc:"Give the versions of audio files presigned download URLs (valid 15 minutes). Optional: false when absent."`
	Filter           model.FileKind `query:"Filter" doc:"Only images or only audio."`
	SearchTerm       string         `query:"SearchTerm" maxLength:"200" doc:"Only files whose full name contains this, case-insensitive." example:"siren"`
	Page             int            `query:"page" minimum:"1" maximum:"1000000" default:"1" doc:"Page number, starting at 1."`
	PageSize         int            `query:"pageSize" minimum:"1" maximum:"500" default:"500" doc:"Files per page, at most 500 (the default)."`
}

// listOutput is a page of the files list, its total and its neighbors.
type listOutput struct {
	TotalCount int64  `header:"X-Total-Count" doc:"Files matching the request over all pages."`
	Link       string `header:"Link" doc:"The next and previous pages (RFC 8288), when there are, relative to the server: </v4/1001/files?...&page=2&pageSize=500>; rel=\"next\", <...>; rel=\"prev\". Past the end of the list, rel=\"prev\" is the last page."`
	Body       []model.FileModel
}

func (h *handlers) list(ctx context.Context, in *listInput) (*listOutput, error) {
	tenant := rest.Tenant(ctx)
	fs, total, err := h.files.Page(ctx, tenant, string(in.Filter), in.SearchTerm, in.PageSize, (in.Page-1)*in.PageSize)
	if err != nil {
		return nil, err
	}
	out := &listOutput{TotalCount: total, Body: make([]model.FileModel, len(fs))}
	for i, f := range fs {
		m := modelOf(f)
		if in.IncludeAudioUrls {
			if err := h.sign(ctx, &m, false); err != nil {
				return nil, err
			}
		}
		out.Body[i] = m.FileModel
	}
	out.Link = pageLinks(ctx, in, total)
	return out, nil
}

// pageLinks is the Link header of a page of the files list: the same
// request for the next and previous pages, where there are such, as
// references relative to the server. Past the end of the list, the
// previous page is the last one (page 1 of an empty list), not the page
// before the one asked for.
func pageLinks(ctx context.Context, in *listInput, total int64) string {
	link := func(page int, rel string) string {
		q := url.Values{}
		q.Set("IncludeAudioUrls", fmt.Sprint(in.IncludeAudioUrls))
		if in.Filter != "" {
			q.Set("Filter", string(in.Filter))
		}
		if in.SearchTerm != "" {
			q.Set("SearchTerm", in.SearchTerm)
		}
		q.Set("page", fmt.Sprint(page))
		q.Set("pageSize", fmt.Sprint(in.PageSize))
		return fmt.Sprintf(`</v4/%s/files?%s>; rel="%s"`, rest.Tenant(ctx), q.Encode(), rel)
	}
	var links []string
	if int64(in.Page)*int64(in.PageSize) < total {
		links = append(links, link(in.Page+1, "next"))
	}
	if in.Page > 1 {
		last := max(rest.NewPaging(rest.PageParams{Page: in.Page, PageSize: in.PageSize}, storage.ExactTotal(total)).TotalPages, 1)
		links = append(links, link(int(min(int64(in.Page-1), last)), "prev"))
	}
	return strings.Join(links, ", ")
}

// DescriptionBody is the JSON body of updateFileDescriptionV4.
type DescriptionBody struct {
	Description string `json:"description" maxLength:"1000" doc:"The new description." example:"Tornado siren, 10 s"`
}

type updateInput struct {
	FilePath
	Description string           `query:"Description" maxLength:"1000" doc:"The new description (or send it in the body)." example:"Tornado siren, 10 s"`
	Body        *DescriptionBody `required:"false"`
}

func (h *handlers) update(ctx context.Context, in *updateInput) (*rest.Output[model.FileModelResponse], error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	desc := in.Description
	if in.Body != nil {
		if in.Description != "" {
			return nil, rest.Invalid("query", "Description", "give the description in the query or in the body, not both", in.Description)
		}
		desc = in.Body.Description
	}
	tenant := rest.Tenant(ctx)
	if err := h.files.SetDescription(ctx, tenant, full, desc); err != nil {
		return nil, notFound(err)
	}
	m, err := h.load(ctx, tenant, full)
	if err != nil {
		return nil, notFound(err)
	}
	if err := h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return rest.Answer(model.FileModelResponse{File: m.FileModel, Message: "description updated"}), nil
}

func (h *handlers) delete(ctx context.Context, in *FilePath) (*struct{}, error) {
	full, err := pathName(in.FileName)
	if err != nil {
		return nil, err
	}
	if err := h.files.Delete(ctx, rest.Tenant(ctx), full); err != nil {
		return nil, notFound(err)
	}
	return nil, nil
}
