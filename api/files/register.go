// Package files serves the per-tenant file store of images and audio.
package files

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/files/fileservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	store "github.com/tocsin/tocsin/storage/files"
)

type handlers struct {
	d       rest.Deps
	files   fileStore
	uploads *fileservice.Service
}

// fileStore keeps the files' metadata and removes their objects.
type fileStore interface {
	Page(ctx context.Context, tenant, kind, term string, limit, offset int) ([]store.File, int64, error)
	Get(ctx context.Context, tenant, fullName string) (store.File, error)
	SetDescription(ctx context.Context, tenant, fullName, description string) error
	Delete(ctx context.Context, tenant, fullName string) error
}

var _ fileStore = (*store.Store)(nil)

// uploadParts documents the multipart body of uploadFileV4; the handler
// reads the parts itself and hands HttpFile to the file service, which
// streams it to the object store.
type uploadParts struct {
	FileName            string `json:"FileName" maxLength:"1024" doc:"Name of the file; with FolderName it makes the full name folder/name. Names are put in Unicode NFC (composed and decomposed forms are one name) and are case-sensitive; no .. or . segments, no leading /, no backslash, no control or invisible characters (line separators, default-ignorable characters such as zero-width joiners and Hangul fillers, the blank braille pattern)." example:"tornado.wav"`
	ContentType         string `json:"ContentType" doc:"The file's content type; must agree with its bytes (a media range such as image/* is a 400). Accepted: image/png, image/jpeg, image/gif, image/webp, image/bmp, audio/wav, audio/mpeg (common aliases such as image/jpg and audio/x-wav too)." example:"audio/wav"`
	ContentLength       int64  `json:"ContentLength" minimum:"0" doc:"The file's size in bytes; must match the bytes of HttpFile." example:"882044"`
	HttpFile            string `json:"HttpFile" format:"binary" contentMediaType:"application/octet-stream" doc:"The file's bytes, at most TOCSIN_FILE_SIZE_LIMIT_BYTES (25 MiB by default)."`
	FolderName          string `json:"FolderName,omitempty" maxLength:"1024" doc:"Folder of the file; may be nested (a/b)." example:"sirens"`
	EncodeForEasAudio   bool   `json:"EncodeForEasAudio,omitempty" doc:"Audio: also store a broadcast (EAS) version: 22.05 kHz mono 16-bit PCM WAV. The audio must be at most 2 minutes long."`
	EncodeForVoiceAudio bool   `json:"EncodeForVoiceAudio,omitempty" doc:"Audio: also store a telephony version: 8 kHz mono 16-bit PCM WAV. The audio must be at most 2 minutes long."`
	ResizeImage         bool   `json:"ResizeImage,omitempty" doc:"Images: also store a version scaled down to MaxWidth, keeping the aspect ratio (images already that narrow get none)."`
	MaxWidth            int    `json:"MaxWidth,omitempty" minimum:"1" maximum:"10000" doc:"Width in pixels of the resized version; required with ResizeImage." example:"640"`
	Description         string `json:"Description,omitempty" maxLength:"1000" doc:"Free text about the file." example:"Tornado siren, 10 s"`
}

type uploadInput struct {
	TenantID int64 `path:"tenantId" doc:"The tenant; must be the token's." example:"1001"`
}

// FilePath is the tenant and the file's full name in the path.
type FilePath struct {
	TenantID int64  `path:"tenantId" doc:"The tenant; must be the token's." example:"1001"`
	FileName string `path:"FileName" maxLength:"3072" doc:"The file's full name (folder/name), URL-encoded: a / inside it is sent as %2F." example:"sirens%2Ftornado.wav"`
}

// Register adds the files operations to api.
func Register(api huma.API, d rest.Deps) {
	files := store.New(d.DB, d.Objects)
	h := &handlers{d: d, files: files, uploads: &fileservice.Service{
		DB: d.DB, Objects: d.Objects, Temporal: d.Temporal, Files: files, WakeStarts: d.WakeStarts,
		Limit: d.Config.FileSizeLimit, ProcessTimeout: d.Config.FileProcessTimeout, MaxLife: d.Config.FileUploadMaxLife, Logger: d.Logger,
	}}
	area := rest.Area{Scope: "content", Tags: []string{"Files"}}

	op := area.Op("uploadFileV4", http.MethodPost, "/v4/{tenantId}/files", http.StatusCreated, "Upload a file (image or audio)",
		"Stores an image or audio file under the tenant, with the versions asked for. The parts may come in any order; "+
			"HttpFile is streamed to the object store, never held whole in memory. The declared ContentType must agree with the "+
			"file's bytes (sniffed) and ContentLength with its size. A name that exists is a 409: uploads never replace; delete first. "+
			"The file is checked and encoded by the ProcessFile workflow on the worker, which the request waits for "+
			"(TOCSIN_FILE_PROCESS_TIMEOUT, 55 s by default); when it does not finish in time, the processing is cancelled, "+
			"nothing of the upload is kept, and the answer is a 503 saying so. Audio must have a sample rate of 8000 to 96000 Hz "+
			"and at most 8 channels; voice and EAS versions are made of audio at most 2 minutes long. Images are decoded only "+
			"when they have at most 40,000,000 pixels and take at most 128 MiB decoded (pixels times bytes per pixel: "+
			"4 for 8-bit RGBA, 8 for 16-bit RGBA, 15 for a progressive YCbCr JPEG, whose coefficients the decoder keeps); "+
			"larger ones are a 413 naming HttpFile.",
		http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType).Operation()
	op.Metadata[rest.StreamBody] = true
	op.Middlewares = huma.Middlewares{streamBody}
	// Documented after registering, so huma leaves the body to the handler.
	rest.RegisterOperation(api, op, func(op *huma.Operation) {
		op.RequestBody = &huma.RequestBody{
			Required: true,
			Content: map[string]*huma.MediaType{"multipart/form-data": {
				Schema: uploadSchema(api.OpenAPI().Components.Schemas),
				Encoding: map[string]*huma.Encoding{
					"HttpFile": {ContentType: "image/png, image/jpeg, image/gif, image/webp, image/bmp, audio/wav, audio/mpeg"},
				},
			}},
		}
	}, h.upload)

	const file = "/v4/{tenantId}/files/{FileName}"
	rest.Register(api, area.Op("getAllFilesV4", http.MethodGet, "/v4/{tenantId}/files", 0, "List files",
		"The tenant's files, ordered by full name, optionally only images or audio and only names containing "+
			"SearchTerm (case-insensitive). With IncludeAudioUrls=true, the versions of audio files carry presigned download URLs; IncludeAudioUrls is optional, false when absent. "+
			"The answer is a list of at most pageSize files (500 by default, which is also the most): page and pageSize "+
			"choose the part of the list; X-Total-Count says how many files match in all, and Link gives the next "+
			"(rel=\"next\") and previous (rel=\"prev\") pages when there are; past the end of the list, the previous page is the last one."),
		h.list)
	rest.Register(api, area.Op("getFileV4", http.MethodGet, file, 0, "Get a file",
		"The file with its versions, each with a presigned download URL valid for 15 minutes."), h.get)
	rest.Register(api, area.Op("updateFileDescriptionV4", http.MethodPut, file, 0, "Change a file's description",
		"Sets the description from the Description query parameter or from a JSON body {\"description\": \"...\"} "+
			"(one of the two, not both); with neither, the description is cleared."),
		h.update)
	rest.Register(api, area.Op("deleteFileV4", http.MethodDelete, file, http.StatusNoContent, "Delete a file",
		"Deletes the file's objects (the original and every version) and its metadata. A second delete is a 404."), h.delete)

	reg := api.OpenAPI().Components.Schemas
	for _, t := range []any{model.FileDetails{}, model.AssetInformation{}, model.FileModelResponse{}} {
		reg.Schema(reflect.TypeOf(t), true, "")
	}
}

// uploadSchema is the schema of the multipart body, with the required parts.
func uploadSchema(r huma.Registry) *huma.Schema {
	s := huma.SchemaFromType(r, reflect.TypeOf(uploadParts{}))
	s.Description = "The parts of an upload. Booleans are true or false."
	return s
}
