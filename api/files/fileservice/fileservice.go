// Package fileservice uploads files to the per-tenant file store
// (uploadFileV4), apart from HTTP: it streams a file's bytes to the object
// store while the request arrives, checks them against what the form
// declares, has the ProcessFile workflow check and encode them (started
// through the start outbox) and waits for it, then records the file, its
// versions and the file.uploaded event. When an upload fails, nothing of it
// is left behind; before its first object is stored, it claims the objects'
// prefix, so that what an upload whose process dies leaves is found and
// removed by the worker's sweep. The package also holds the rules of file
// names.
//
// Its errors say what failed in terms of the upload form: a FieldError names
// the part, and ErrTooLarge, UnsupportedError, ExistsError and
// UnavailableError are the other refusals; the handler maps them to
// problems.
package fileservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/workflows"
)

// DefaultProcessTimeout is how long an upload waits for its ProcessFile
// workflow unless Service.ProcessTimeout says otherwise.
const DefaultProcessTimeout = 55 * time.Second

// DefaultMaxLife is an upload's maximum life unless Service.MaxLife says
// otherwise.
const DefaultMaxLife = 15 * time.Minute

// Store keeps the files' metadata and the uploads' claims on their objects.
type Store interface {
	Exists(ctx context.Context, tenant, fullName string) (bool, error)
	Create(ctx context.Context, f files.NewFile) error
	Get(ctx context.Context, tenant, fullName string) (files.File, error)
	Claim(ctx context.Context, c files.UploadClaim, life time.Duration) error
	Release(ctx context.Context, tenant, prefix string) error
}

var _ Store = (*files.Store)(nil)

// Service uploads files.
type Service struct {
	// DB holds the start outbox that starts ProcessFile.
	DB       *storage.DB
	Objects  *storage.Objects
	Temporal client.Client
	Files    Store
	// WakeStarts wakes the workflow starter of this process after a start
	// is enqueued.
	WakeStarts func()
	// Limit is the size of the largest file accepted, in bytes.
	Limit int64
	// ProcessTimeout is how long an upload waits for its processing
	// (DefaultProcessTimeout when zero); then the processing is cancelled
	// and the upload removed.
	ProcessTimeout time.Duration
	// MaxLife is how long an upload may take from its first object stored
	// to its file recorded (DefaultMaxLife when zero): the claim on its
	// objects expires then, and the worker's sweep removes them unless
	// the file was recorded or the upload removed them. It must outlast
	// the body's arrival, ProcessTimeout and the cancellation after it.
	MaxLife time.Duration
	Logger  *slog.Logger
}

// Form is what the parts of an upload declare. Given holds the names of the
// parts given so far (HttpFile among them once the file's part came); the
// fields of the others are zero.
type Form struct {
	FileName, FolderName, ContentType, Description string
	ContentLength                                  int64
	EncodeForEasAudio, EncodeForVoiceAudio         bool
	ResizeImage                                    bool
	MaxWidth                                       int
	Given                                          map[string]bool
}

// FullName is the full name the form gives the file.
func (f *Form) FullName() string { return FullName(f.FolderName, f.FileName) }

// FieldError says that a part of the upload fails a check.
type FieldError struct {
	// Field names the part: FileName, ContentLength, HttpFile, …
	Field   string
	Message string
	// Value is the value given, when it is worth showing.
	Value any
}

func (e *FieldError) Error() string { return e.Field + " " + e.Message }

func invalid(field, msg string, value any) *FieldError {
	return &FieldError{Field: field, Message: msg, Value: value}
}

// ErrTooLarge means that the request body carrying the file is larger than
// its cap (see LimitBody); a TooLargeError wraps it when a part of the form
// is at fault.
var ErrTooLarge = errors.New("larger than the file size limit")

// TooLargeError is ErrTooLarge naming the part at fault: ContentLength when
// it declares more than the limit, HttpFile when its bytes are more.
type TooLargeError struct {
	Field string
	// Value is the value given, when it is worth showing.
	Value any
}

func (e *TooLargeError) Error() string { return e.Field + " is " + ErrTooLarge.Error() }

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// UnsupportedError means that the file's type, declared or read from its
// bytes, is not one the file store takes.
type UnsupportedError struct{ Message string }

func (e *UnsupportedError) Error() string { return e.Message }

// ExistsError means that the tenant has a file of that full name: uploads
// never replace one.
type ExistsError struct{ FullName string }

func (e *ExistsError) Error() string { return "a file named " + e.FullName + " exists" }

// FieldsError is FieldErrors about several parts at once.
type FieldsError []*FieldError

func (e FieldsError) Error() string {
	var b strings.Builder
	for i, f := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Error())
	}
	return b.String()
}

// ImageTooLargeError means that the image has more pixels, or would take
// more memory decoded, than the file store decodes.
type ImageTooLargeError struct{ Message string }

func (e *ImageTooLargeError) Error() string { return e.Message }

// TimeoutError means that the file's processing did not finish within the
// upload's wait: it was cancelled and the upload removed (or is being
// removed by the processing as it stops), so nothing of it is kept. It also
// means that the upload outlived its maximum life, and the sweep took its
// objects before the file was recorded.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("processing the file did not finish within %s", e.After)
}

// UnavailableError means that a dependency failed: "the object store", "the
// database" or "the worker".
type UnavailableError struct {
	Dependency string
	Err        error
}

func (e *UnavailableError) Error() string { return e.Dependency + ": " + e.Err.Error() }

func (e *UnavailableError) Unwrap() error { return e.Err }

// Receive streams the file's part of an upload (HttpFile) to the object
// store; form holds the parts that came before it.
type Receive func(file io.Reader, form *Form) error

// LimitBody caps the request body that carries an upload a little above the
// file size limit (the text parts and the multipart framing come with the
// file): reading past it fails with ErrTooLarge.
func (s *Service) LimitBody(r io.Reader) io.Reader {
	return &cappedReader{r: r, left: s.Limit + 1<<20}
}

// Upload uploads one file of tenant. decode reads the upload's form: it
// hands the file's part to receive as the part comes and returns the whole
// form, with every part it requires given. Upload then checks the form
// against the stored bytes, has them processed, records the file and
// answers it as stored. When anything fails before the file is recorded,
// the objects the upload stored are removed, and then its claim on them
// unless its processing may still write some.
func (s *Service) Upload(ctx context.Context, tenant string, decode func(receive Receive) (Form, error)) (files.File, error) {
	u := &upload{s: s, tenant: tenant, id: uuid.NewString()}
	u.prefix = storage.TenantKey(tenant, "files/"+u.id+"/")
	f, err := u.run(ctx, decode)
	if err != nil && u.file != nil && !u.recorded {
		if u.removeObjects() && !u.processing {
			u.release()
		}
	}
	return f, err
}

// stored is the original as it reached the object store.
type stored struct {
	key         string
	size        int64
	sha256      string
	contentType string
}

// upload is one upload in progress.
type upload struct {
	s      *Service
	tenant string
	id     string // random; names the object prefix and the workflow
	prefix string
	// file is set once an object of the upload may exist, after the
	// upload claimed their prefix.
	file *stored
	// typeChecked records that ContentType was checked while the file streamed.
	typeChecked bool
	// recorded is set once the file's metadata refers to its objects.
	recorded bool
	// processing is set while a ProcessFile run of the upload may write
	// objects that it will not remove itself: from its start's enqueueing
	// until its outcome is known, its start is withdrawn or it is
	// cancelled (a cancelled run removes what it wrote).
	processing bool
}

func (u *upload) run(ctx context.Context, decode func(Receive) (Form, error)) (files.File, error) {
	form, err := decode(func(r io.Reader, f *Form) error { return u.receive(ctx, r, f) })
	if err != nil {
		return files.File{}, err
	}
	if u.file == nil {
		return files.File{}, invalid("HttpFile", "required part is missing", nil)
	}
	if form.ContentLength != u.file.size {
		return files.File{}, invalid("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has %d", form.ContentLength, u.file.size), form.ContentLength)
	}
	if !u.typeChecked {
		if err := u.checkType(&form, u.file.contentType); err != nil {
			return files.File{}, err
		}
	}
	if err := u.checkName(ctx, &form); err != nil {
		return files.File{}, err
	}
	kind := media.Kind(u.file.contentType)
	switch {
	case form.ResizeImage && kind != media.Image:
		return files.File{}, invalid("ResizeImage", "applies to images only", true)
	case form.ResizeImage && form.MaxWidth == 0:
		return files.File{}, invalid("MaxWidth", "is required with ResizeImage", nil)
	case form.EncodeForVoiceAudio && kind != media.Audio:
		return files.File{}, invalid("EncodeForVoiceAudio", "applies to audio only", true)
	case form.EncodeForEasAudio && kind != media.Audio:
		return files.File{}, invalid("EncodeForEasAudio", "applies to audio only", true)
	}
	in := activities.ProcessFileInput{
		Tenant: u.tenant, Prefix: u.prefix, OriginalKey: u.file.key, ContentType: u.file.contentType,
		Voice: form.EncodeForVoiceAudio, Eas: form.EncodeForEasAudio,
	}
	if form.ResizeImage {
		in.MaxWidth = form.MaxWidth
	}
	res, err := u.process(ctx, in)
	if err != nil {
		if errors.Is(err, errAudioTooLong) {
			var fs FieldsError
			for _, p := range []struct {
				field string
				want  bool
			}{{"EncodeForVoiceAudio", form.EncodeForVoiceAudio}, {"EncodeForEasAudio", form.EncodeForEasAudio}} {
				if p.want {
					fs = append(fs, invalid(p.field, fmt.Sprintf("voice and EAS versions are made of audio at most %.0f minutes long: %s",
						activities.MaxEncodedDuration.Minutes(), strings.TrimPrefix(err.Error(), errAudioTooLong.Error()+": ")), true))
				}
			}
			return files.File{}, fs
		}
		return files.File{}, err
	}
	return u.record(ctx, &form, kind, res)
}

// checkType compares the declared ContentType with the type of the file's bytes.
func (u *upload) checkType(f *Form, sniffed string) error {
	declared := media.Normalize(f.ContentType)
	if media.IsRange(declared) {
		return invalid("ContentType", fmt.Sprintf("is a media range (%s), which names many types: give the file's own type, one of %s", declared, strings.Join(media.Supported, ", ")), f.ContentType)
	}
	if media.Kind(declared) == "" {
		return &UnsupportedError{fmt.Sprintf("ContentType %q is not accepted; accepted are %s", f.ContentType, strings.Join(media.Supported, ", "))}
	}
	if declared != sniffed {
		return invalid("ContentType", fmt.Sprintf("says %s but the file's bytes are %s", declared, sniffed), f.ContentType)
	}
	u.typeChecked = true
	return nil
}

// checkName validates FileName and FolderName and that the name is free.
func (u *upload) checkName(ctx context.Context, f *Form) error {
	if err := CheckPath(f.FileName); err != nil {
		return invalid("FileName", err.Error(), f.FileName)
	}
	if f.FolderName != "" {
		if err := CheckPath(f.FolderName); err != nil {
			return invalid("FolderName", err.Error(), f.FolderName)
		}
	}
	full := f.FullName()
	if err := CheckPath(full); err != nil {
		return invalid("FileName", err.Error(), full)
	}
	exists, err := u.s.Files.Exists(ctx, u.tenant, full)
	if err != nil {
		return err
	}
	if exists {
		return &ExistsError{full}
	}
	return nil
}

// errAudioTooLong wraps the message of ProcessFile's AudioTooLong error;
// run names the parts that asked for an encoding.
var errAudioTooLong = errors.New("audio too long")

// process has the ProcessFile workflow started through the start outbox
// and waits for its result. When the wait times out, it withdraws the
// start or cancels the workflow (which then removes what it wrote), unless
// the workflow completed meanwhile: then its result counts.
func (u *upload) process(ctx context.Context, in activities.ProcessFileInput) (activities.ProcessFileResult, error) {
	var res activities.ProcessFileResult
	timeout := u.s.ProcessTimeout
	if timeout <= 0 {
		timeout = DefaultProcessTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := u.workflowID()
	u.processing = true
	if err := storage.EnqueueStart(ctx, u.s.DB, storage.StartRequest{
		TenantID: u.tenant, WorkflowID: id, Workflow: "ProcessFile", Input: in, Priority: storage.PriorityInteractive,
	}); err != nil {
		return res, &UnavailableError{"the database", err}
	}
	if u.s.WakeStarts != nil {
		u.s.WakeStarts()
	}
	err := u.wait(ctx, id, &res)
	// The client's long poll may end with its own deadline error a moment
	// before ctx reports its end.
	var deadline *serviceerror.DeadlineExceeded
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &deadline)) {
		// Withdraw the start if it is still waiting (this waits for a
		// starter that holds it), then cancel the workflow if it runs.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer ccancel()
		withdrawn, werr := storage.CancelStart(cctx, u.s.DB, u.tenant, id)
		if werr != nil || !withdrawn {
			cerr := u.s.Temporal.CancelWorkflow(cctx, id, "")
			var done *serviceerror.NotFound
			if !errors.As(cerr, &done) {
				u.processing = cerr != nil
				return res, &TimeoutError{timeout}
			}
			// It completed in the meantime: its outcome counts.
			err = u.s.Temporal.GetWorkflow(cctx, id, "").Get(cctx, &res)
			if err != nil && cctx.Err() != nil {
				return res, &TimeoutError{timeout}
			}
		} else {
			u.processing = false
			return res, &TimeoutError{timeout}
		}
	}
	var closed *temporal.WorkflowExecutionError
	if err == nil || errors.As(err, &closed) {
		u.processing = false
	}
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeUnsupportedMedia:
		return res, &UnsupportedError{appErr.Message()}
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeInvalidMedia:
		return res, invalid("HttpFile", "is not a valid "+u.file.contentType+" file: "+strings.TrimPrefix(appErr.Message(), media.ErrInvalid.Error()+": "), nil)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAudioOutOfBounds:
		return res, invalid("HttpFile", strings.TrimPrefix(appErr.Message(), media.ErrOutOfBounds.Error()+": "), nil)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeImageTooLarge:
		return res, &ImageTooLargeError{strings.TrimPrefix(appErr.Message(), media.ErrTooLarge.Error()+": ")}
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeAudioTooLong:
		return res, fmt.Errorf("%w: %s", errAudioTooLong, strings.TrimPrefix(appErr.Message(), media.ErrTooLong.Error()+": "))
	}
	return res, &UnavailableError{"the worker", err}
}

// wait waits for the result of workflow id, which the starter may not have
// started yet.
func (u *upload) wait(ctx context.Context, id string, res *activities.ProcessFileResult) error {
	for {
		err := u.s.Temporal.GetWorkflow(ctx, id, "").Get(ctx, res)
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

// record writes the metadata and the file.uploaded event in one
// transaction and reads the file back.
func (u *upload) record(ctx context.Context, f *Form, kind string, res activities.ProcessFileResult) (files.File, error) {
	full := f.FullName()
	folder, name := SplitName(full)
	nf := files.NewFile{
		Tenant: u.tenant, FullName: full, FolderName: folder, FileName: name, Kind: kind,
		ContentType: u.file.contentType, SizeBytes: u.file.size, SHA256: u.file.sha256, Description: f.Description,
		ObjectPrefix: u.prefix, Details: res.Details,
		Assets: []files.NewAsset{{Kind: activities.AssetOriginal, Key: u.file.key, ContentType: u.file.contentType,
			SizeBytes: u.file.size, SHA256: u.file.sha256, Details: res.Details}},
	}
	for _, a := range res.Assets {
		nf.Assets = append(nf.Assets, files.NewAsset{Kind: a.Kind, Key: a.Key, ContentType: a.ContentType,
			SizeBytes: a.SizeBytes, SHA256: a.SHA256, Details: a.Details})
	}
	nf.Claimed = true
	err := u.s.Files.Create(ctx, nf)
	if errors.Is(err, storage.ErrConflict) {
		return files.File{}, &ExistsError{full}
	}
	if errors.Is(err, files.ErrClaimLost) {
		return files.File{}, &TimeoutError{u.s.maxLife()}
	}
	if err != nil {
		return files.File{}, err
	}
	u.recorded = true
	return u.s.Files.Get(ctx, u.tenant, full)
}

// workflowID is the business id of the upload's ProcessFile run.
func (u *upload) workflowID() string { return workflows.ProcessFileID(u.tenant, u.id) }

func (s *Service) maxLife() time.Duration {
	if s.MaxLife <= 0 {
		return DefaultMaxLife
	}
	return s.MaxLife
}

// claim records the upload's claim on its prefix; receive calls it before
// the first object is stored.
func (u *upload) claim(ctx context.Context) error {
	c := files.UploadClaim{Tenant: u.tenant, Prefix: u.prefix, WorkflowID: u.workflowID()}
	if err := u.s.Files.Claim(ctx, c, u.s.maxLife()); err != nil {
		return &UnavailableError{"the database", err}
	}
	return nil
}

// release deletes the upload's claim once the request removed its objects,
// in the background of a failed request. When it fails, the sweep takes
// the claim once it expires.
func (u *upload) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := u.s.Files.Release(ctx, u.tenant, u.prefix); err != nil {
		u.s.Logger.Warn("release upload claim", "err", err)
	}
}

// removeObjects deletes every object of the upload, in the background of a
// failed request, and reports whether it removed them all.
func (u *upload) removeObjects() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := u.s.Objects.RemovePrefix(ctx, u.prefix); err != nil {
		u.s.Logger.Warn("remove upload objects", "err", err)
		return false
	}
	return true
}
