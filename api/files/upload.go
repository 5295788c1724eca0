package files

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	store "github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/workflows"
)

// MaxWidthLimit is the largest MaxWidth accepted.
const MaxWidthLimit = 10000

// processTimeout is how long an upload waits for its ProcessFile workflow.
const processTimeout = 55 * time.Second

type bodyKey struct{}

type streamedBody struct {
	r           io.Reader
	contentType string
}

// streamBody hands the raw body stream and its content type to the handler.
func streamBody(ctx huma.Context, next func(huma.Context)) {
	next(huma.WithValue(ctx, bodyKey{}, streamedBody{r: ctx.BodyReader(), contentType: ctx.Header("Content-Type")}))
}

// uploadForm holds the text parts of an upload.
type uploadForm struct {
	FileName, FolderName, ContentType, Description string
	ContentLength                                  int64
	EncodeForEasAudio, EncodeForVoiceAudio         bool
	ResizeImage                                    bool
	MaxWidth                                       int
	seen                                           map[string]bool
}

// textParts are the parts besides HttpFile.
var textParts = map[string]bool{
	"FileName": true, "FolderName": true, "ContentType": true, "ContentLength": true, "Description": true,
	"EncodeForEasAudio": true, "EncodeForVoiceAudio": true, "ResizeImage": true, "MaxWidth": true,
}

func invalidPart(name, msg string, value any) *rest.ProblemDetails {
	return rest.Invalid("body", name, msg, value)
}

func (f *uploadForm) set(name, v string) error {
	if f.seen[name] {
		return invalidPart(name, "given more than once", nil)
	}
	f.seen[name] = true
	if strings.IndexByte(v, 0) >= 0 {
		return invalidPart(name, "contains a NUL character", nil)
	}
	if !utf8.ValidString(v) {
		return invalidPart(name, "is not valid UTF-8", nil)
	}
	var err error
	switch name {
	case "FileName":
		f.FileName = v
	case "FolderName":
		f.FolderName = v
	case "ContentType":
		f.ContentType = v
	case "Description":
		if utf8Len(v) > 1000 {
			return invalidPart(name, "must be at most 1000 characters", nil)
		}
		f.Description = v
	case "ContentLength":
		f.ContentLength, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || f.ContentLength < 0 {
			return invalidPart(name, "must be a non-negative integer (the file's size in bytes)", v)
		}
	case "MaxWidth":
		f.MaxWidth, err = strconv.Atoi(strings.TrimSpace(v))
		if err != nil || f.MaxWidth < 1 || f.MaxWidth > MaxWidthLimit {
			return invalidPart(name, fmt.Sprintf("must be an integer from 1 to %d", MaxWidthLimit), v)
		}
	case "EncodeForEasAudio", "EncodeForVoiceAudio", "ResizeImage":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return invalidPart(name, "must be true or false", v)
		}
		switch name {
		case "EncodeForEasAudio":
			f.EncodeForEasAudio = b
		case "EncodeForVoiceAudio":
			f.EncodeForVoiceAudio = b
		default:
			f.ResizeImage = b
		}
	}
	return nil
}

func utf8Len(s string) int { return len([]rune(s)) }

// stored is the original as it reached the object store.
type stored struct {
	key         string
	size        int64
	sha256      string
	contentType string
}

// upload is one uploadFileV4 request in progress.
type upload struct {
	h      *handlers
	tenant string
	id     string // random; names the object prefix and the workflow
	prefix string
	form   uploadForm
	file   *stored
	// typeChecked records that ContentType was checked while the file streamed.
	typeChecked bool
	sniffed     string
}

// errTooLarge marks a body past the limit.
var errTooLarge = errors.New("too large")

type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

func (h *handlers) upload(ctx context.Context, _ *uploadInput) (*fileOutput, error) {
	body, _ := ctx.Value(bodyKey{}).(streamedBody)
	mt, params, err := mime.ParseMediaType(body.contentType)
	if body.r == nil || err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, rest.Problem(http.StatusUnsupportedMediaType, "the body must be multipart/form-data with a boundary")
	}
	u := &upload{h: h, tenant: rest.Tenant(ctx), id: uuid.NewString(), form: uploadForm{seen: map[string]bool{}}}
	u.prefix = storage.TenantKey(u.tenant, "files/"+u.id+"/")
	committed := false
	defer func() {
		if !committed && u.file != nil {
			u.removeObjects()
		}
	}()
	out, err := u.run(ctx, multipart.NewReader(&cappedReader{r: body.r, left: h.d.Config.FileSizeLimit + 1<<20}, params["boundary"]))
	if err != nil {
		return nil, err
	}
	committed = true
	return out, nil
}

func tooLarge(limit int64) *rest.ProblemDetails {
	return rest.Problem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the file is larger than the limit of %d bytes", limit))
}

func (u *upload) run(ctx context.Context, mr *multipart.Reader) (*fileOutput, error) {
	limit := u.h.d.Config.FileSizeLimit
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge(limit)
		}
		if err != nil {
			return nil, rest.Invalid("body", "", "malformed multipart body: "+err.Error(), nil)
		}
		name := part.FormName()
		switch {
		case name == "HttpFile":
			if u.file != nil {
				return nil, invalidPart(name, "given more than once", nil)
			}
			if err := u.receive(ctx, part); err != nil {
				return nil, err
			}
		case textParts[name]:
			v, err := io.ReadAll(io.LimitReader(part, 4097))
			if errors.Is(err, errTooLarge) {
				return nil, tooLarge(limit)
			}
			if err != nil {
				return nil, rest.Invalid("body", name, "cannot read the part: "+err.Error(), nil)
			}
			if len(v) > 4096 {
				return nil, invalidPart(name, "must be at most 4096 bytes", nil)
			}
			if err := u.form.set(name, string(v)); err != nil {
				return nil, err
			}
		default:
			// Unknown parts are read and ignored.
			if _, err := io.Copy(io.Discard, part); errors.Is(err, errTooLarge) {
				return nil, tooLarge(limit)
			}
		}
		part.Close()
	}

	var missing []rest.ValidationFailure
	for _, name := range []string{"FileName", "ContentType", "ContentLength"} {
		if !u.form.seen[name] {
			missing = append(missing, rest.Failure("body", name, "required part is missing", nil))
		}
	}
	if u.file == nil {
		missing = append(missing, rest.Failure("body", "HttpFile", "required part is missing", nil))
	}
	if len(missing) > 0 {
		return nil, rest.Problem(http.StatusBadRequest, "validation failed", missing...)
	}
	if u.form.ContentLength != u.file.size {
		return nil, invalidPart("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has %d", u.form.ContentLength, u.file.size), u.form.ContentLength)
	}
	if err := u.checkType(); err != nil {
		return nil, err
	}
	if err := u.checkName(ctx); err != nil {
		return nil, err
	}
	kind := media.Kind(u.file.contentType)
	f := u.form
	switch {
	case f.ResizeImage && kind != media.Image:
		return nil, invalidPart("ResizeImage", "applies to images only", true)
	case f.ResizeImage && f.MaxWidth == 0:
		return nil, invalidPart("MaxWidth", "is required with ResizeImage", nil)
	case f.EncodeForVoiceAudio && kind != media.Audio:
		return nil, invalidPart("EncodeForVoiceAudio", "applies to audio only", true)
	case f.EncodeForEasAudio && kind != media.Audio:
		return nil, invalidPart("EncodeForEasAudio", "applies to audio only", true)
	}
	in := activities.ProcessFileInput{
		Tenant: u.tenant, Prefix: u.prefix, OriginalKey: u.file.key, ContentType: u.file.contentType,
		Voice: f.EncodeForVoiceAudio, Eas: f.EncodeForEasAudio,
	}
	if f.ResizeImage {
		in.MaxWidth = f.MaxWidth
	}
	res, err := u.process(ctx, in)
	if err != nil {
		return nil, err
	}
	return u.record(ctx, kind, res)
}

// receive streams HttpFile to the object store, checking its type from its
// first bytes, its size against the limit and (when ContentLength came
// first) against ContentLength.
func (u *upload) receive(ctx context.Context, part *multipart.Part) error {
	limit := u.h.d.Config.FileSizeLimit
	br := bufio.NewReaderSize(part, media.SniffLen)
	head, err := br.Peek(media.SniffLen)
	if errors.Is(err, errTooLarge) {
		return tooLarge(limit)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return rest.Invalid("body", "HttpFile", "cannot read the file: "+err.Error(), nil)
	}
	if len(head) == 0 {
		return invalidPart("HttpFile", "is empty", nil)
	}
	u.sniffed = media.Sniff(head)
	if media.Kind(u.sniffed) == "" {
		return rest.Problem(http.StatusUnsupportedMediaType, fmt.Sprintf(
			"the file's bytes are %s; accepted are images (PNG, JPEG, GIF, WebP, BMP) and audio (WAV, MP3)", u.sniffed))
	}
	if u.form.seen["ContentType"] {
		if err := u.checkTypeWith(u.sniffed); err != nil {
			return err
		}
	}
	// Fail early, before the bytes travel, when the name is already wrong.
	if u.form.seen["FileName"] {
		if err := checkPath(u.form.FileName); err != nil {
			return invalidPart("FileName", err.Error(), u.form.FileName)
		}
		if u.form.seen["FolderName"] {
			if err := u.checkName(ctx); err != nil {
				return err
			}
		}
	}
	if u.form.seen["ContentLength"] && u.form.ContentLength > limit {
		return tooLarge(limit)
	}

	h := sha256.New()
	src := &sourceReader{r: io.TeeReader(br, h)}
	key := u.prefix + activities.AssetOriginal
	var size int64
	opts := minio.PutObjectOptions{ContentType: u.sniffed, DisableMultipart: true}
	if u.form.seen["ContentLength"] {
		// The size is known: stream straight to the object store.
		size = u.form.ContentLength
		lr := &exactReader{r: src, left: size}
		u.file = &stored{key: key} // from here on the object may exist
		_, perr := u.h.d.Objects.Client.PutObject(ctx, u.h.d.Objects.Bucket, key, lr, size, opts)
		switch {
		case errors.Is(src.err, errTooLarge):
			return tooLarge(limit)
		case src.err != nil:
			return rest.Invalid("body", "HttpFile", "the upload was interrupted: "+src.err.Error(), nil)
		case lr.short:
			return invalidPart("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has %d", size, size-lr.left), size)
		case perr != nil:
			return rest.Unavailable("the object store", perr)
		}
		if n, _ := br.Read(make([]byte, 1)); n > 0 {
			return invalidPart("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has more", size), size)
		}
	} else {
		// The size is not known yet: spool to a temporary file first.
		tmp, err := os.CreateTemp("", "tocsin-upload-*")
		if err != nil {
			return fmt.Errorf("temp file: %w", err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		size, err = io.Copy(tmp, io.LimitReader(src, limit+1))
		switch {
		case errors.Is(err, errTooLarge) || size > limit:
			return tooLarge(limit)
		case src.err != nil:
			return rest.Invalid("body", "HttpFile", "the upload was interrupted: "+src.err.Error(), nil)
		case err != nil:
			return fmt.Errorf("spool upload: %w", err)
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		u.file = &stored{key: key}
		if _, err := u.h.d.Objects.Client.PutObject(ctx, u.h.d.Objects.Bucket, key, tmp, size, opts); err != nil {
			return rest.Unavailable("the object store", err)
		}
	}
	u.file = &stored{key: key, size: size, sha256: hex.EncodeToString(h.Sum(nil)), contentType: u.sniffed}
	return nil
}

// sourceReader remembers the first error other than io.EOF of its source,
// so a client's broken upload is told apart from the object store's failure.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && s.err == nil {
		s.err = err
	}
	return n, err
}

// exactReader reads exactly left bytes and records when the source ends early.
type exactReader struct {
	r     io.Reader
	left  int64
	short bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) && e.left > 0 {
		e.short = true
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// checkType compares the declared ContentType with the sniffed one.
func (u *upload) checkType() error {
	if u.typeChecked {
		return nil
	}
	return u.checkTypeWith(u.file.contentType)
}

func (u *upload) checkTypeWith(sniffed string) error {
	declared := media.Normalize(u.form.ContentType)
	if media.Kind(declared) == "" {
		return rest.Problem(http.StatusUnsupportedMediaType, fmt.Sprintf(
			"ContentType %q is not accepted; accepted are %s", u.form.ContentType, strings.Join(media.Supported, ", ")))
	}
	if declared != sniffed {
		return invalidPart("ContentType", fmt.Sprintf("says %s but the file's bytes are %s", declared, sniffed), u.form.ContentType)
	}
	u.typeChecked = true
	return nil
}

// checkName validates FileName and FolderName and that the name is free.
func (u *upload) checkName(ctx context.Context) error {
	if err := checkPath(u.form.FileName); err != nil {
		return invalidPart("FileName", err.Error(), u.form.FileName)
	}
	if u.form.FolderName != "" {
		if err := checkPath(u.form.FolderName); err != nil {
			return invalidPart("FolderName", err.Error(), u.form.FolderName)
		}
	}
	full := fullName(u.form.FolderName, u.form.FileName)
	if err := checkPath(full); err != nil {
		return invalidPart("FileName", err.Error(), full)
	}
	exists, err := u.h.files.Exists(ctx, u.tenant, full)
	if err != nil {
		return err
	}
	if exists {
		return rest.Conflict(fmt.Sprintf("a file named %s exists; delete it first to replace it", full))
	}
	return nil
}

// process has the ProcessFile workflow started through the start outbox
// and waits for its result.
func (u *upload) process(ctx context.Context, in activities.ProcessFileInput) (activities.ProcessFileResult, error) {
	var res activities.ProcessFileResult
	ctx, cancel := context.WithTimeout(ctx, processTimeout)
	defer cancel()
	id := workflows.ProcessFileID(u.tenant, u.id)
	if err := storage.EnqueueStart(ctx, u.h.d.DB, storage.StartRequest{
		TenantID: u.tenant, WorkflowID: id, Workflow: "ProcessFile", Input: in, Priority: storage.PriorityInteractive,
	}); err != nil {
		return res, rest.Unavailable("the database", err)
	}
	u.h.d.WakeStarts()
	err := u.wait(ctx, id, &res)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeUnsupportedMedia:
		return res, rest.Problem(http.StatusUnsupportedMediaType, appErr.Message())
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeInvalidMedia:
		return res, invalidPart("HttpFile", "is not a valid "+u.file.contentType+" file: "+appErr.Message(), nil)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAudioTooLong:
		return res, invalidPart("EncodeForEasAudio", "EAS audio is at most 2 minutes long: "+appErr.Message(), true)
	}
	if ctx.Err() != nil {
		// Withdraw the start if it is still waiting (this waits for a
		// starter that holds it), then cancel the workflow if it runs.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer ccancel()
		if withdrawn, err := storage.CancelStart(cctx, u.h.d.DB, u.tenant, id); err != nil || !withdrawn {
			_ = u.h.d.Temporal.CancelWorkflow(cctx, id, "")
		}
		return res, rest.Unavailable("the worker", fmt.Errorf("processing did not finish within %s", processTimeout))
	}
	return res, rest.Unavailable("the worker", err)
}

// wait waits for the result of workflow id, which the starter may not have
// started yet.
func (u *upload) wait(ctx context.Context, id string, res *activities.ProcessFileResult) error {
	for {
		err := u.h.d.Temporal.GetWorkflow(ctx, id, "").Get(ctx, res)
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// record writes the metadata and the file.uploaded event in one transaction.
func (u *upload) record(ctx context.Context, kind string, res activities.ProcessFileResult) (*fileOutput, error) {
	full := fullName(u.form.FolderName, u.form.FileName)
	folder, name := splitName(full)
	nf := store.NewFile{
		Tenant: u.tenant, FullName: full, FolderName: folder, FileName: name, Kind: kind,
		ContentType: u.file.contentType, SizeBytes: u.file.size, SHA256: u.file.sha256, Description: u.form.Description,
		ObjectPrefix: u.prefix, Details: res.Details,
		Assets: []store.NewAsset{{Kind: activities.AssetOriginal, Key: u.file.key, ContentType: u.file.contentType,
			SizeBytes: u.file.size, SHA256: u.file.sha256, Details: res.Details}},
	}
	for _, a := range res.Assets {
		nf.Assets = append(nf.Assets, store.NewAsset{Kind: a.Kind, Key: a.Key, ContentType: a.ContentType,
			SizeBytes: a.SizeBytes, SHA256: a.SHA256, Details: a.Details})
	}
	err := u.h.files.Create(ctx, nf)
	if errors.Is(err, storage.ErrConflict) {
		return nil, rest.Conflict(fmt.Sprintf("a file named %s exists; delete it first to replace it", full))
	}
	if err != nil {
		return nil, err
	}
	m, err := u.h.load(ctx, u.tenant, full)
	if err != nil {
		return nil, err
	}
	if err := u.h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return &fileOutput{Body: m.FileModel}, nil
}

// removeObjects deletes every object of the upload, in the background of a
// failed request.
func (u *upload) removeObjects() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := u.h.d.Objects
	for obj := range o.Client.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Prefix: u.prefix, Recursive: true}) {
		if obj.Err != nil {
			u.h.d.Logger.Warn("list upload objects to remove", "err", obj.Err)
			return
		}
		if err := o.Client.RemoveObject(ctx, o.Bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			u.h.d.Logger.Warn("remove upload object", "err", err)
		}
	}
}
