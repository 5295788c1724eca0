package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/files/fileservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/names"
)

// MaxWidthLimit is the largest MaxWidth accepted.
const MaxWidthLimit = 10000

type bodyKey struct{}

type streamedBody struct {
	r           io.Reader
	contentType string
}

// streamBody hands the raw body stream and its content type to the handler.
func streamBody(ctx huma.Context, next func(huma.Context)) {
	next(huma.WithValue(ctx, bodyKey{}, streamedBody{r: ctx.BodyReader(), contentType: ctx.Header("Content-Type")}))
}

// textParts are the parts besides HttpFile.
var textParts = []string{
	"FileName", "FolderName", "ContentType", "ContentLength", "Description",
	"EncodeForEasAudio", "EncodeForVoiceAudio", "ResizeImage", "MaxWidth",
}

func invalidPart(name, msg string, value any) *rest.ProblemDetails {
	return rest.Invalid("body", name, msg, value)
}

// setPart reads the text part name of value v into f.
func setPart(f *fileservice.Form, name, v string) error {
	if f.Given[name] {
		return invalidPart(name, "given more than once", nil)
	}
	f.Given[name] = true
	if strings.IndexByte(v, 0) >= 0 {
		return invalidPart(name, "contains a NUL character", nil)
	}
	if !utf8.ValidString(v) {
		return invalidPart(name, "is not valid UTF-8", nil)
	}
	var err error
	switch name {
	case "FileName":
		f.FileName = names.Normal(v)
	case "FolderName":
		f.FolderName = names.Normal(v)
	case "ContentType":
		f.ContentType = v
	case "Description":
		if utf8Len(v) > 1000 {
			return invalidPart(name, "must be at most 1000 characters", nil)
		}
		f.Description = v
	case "ContentLength":
		f.ContentLength, err = rest.FormInteger(name, v, 0, math.MaxInt64)
		return err
	case "MaxWidth":
		var w int64
		w, err = rest.FormInteger(name, v, 1, MaxWidthLimit)
		f.MaxWidth = int(w)
		return err
	case "EncodeForEasAudio", "EncodeForVoiceAudio", "ResizeImage":
		b, err := rest.FormBoolean(name, v)
		if err != nil {
			return err
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

// upload decodes the multipart form of uploadFileV4 and has the file
// service store the file, handing it the file's part as it arrives.
func (h *handlers) upload(ctx context.Context, _ *uploadInput) (*rest.Output[model.FileModel], error) {
	body, _ := ctx.Value(bodyKey{}).(streamedBody)
	mt, params, err := mime.ParseMediaType(body.contentType)
	if body.r == nil || err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, rest.Problem(http.StatusUnsupportedMediaType, "the body must be multipart/form-data with a boundary")
	}
	mr := multipart.NewReader(h.uploads.LimitBody(body.r), params["boundary"])
	f, err := h.uploads.Upload(ctx, rest.Tenant(ctx), func(receive fileservice.Receive) (fileservice.Form, error) {
		return readForm(mr, receive)
	})
	if err != nil {
		return nil, h.uploadProblem(err)
	}
	m := modelOf(f)
	if err := h.sign(ctx, &m, true); err != nil {
		return nil, err
	}
	return rest.Answer(m.FileModel), nil
}

// readForm reads the parts of an upload in the order they come, handing
// HttpFile to receive, and checks that every required part came.
func readForm(mr *multipart.Reader, receive fileservice.Receive) (fileservice.Form, error) {
	form := fileservice.Form{Given: map[string]bool{}}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, fileservice.ErrTooLarge) {
			return form, err
		}
		if err != nil {
			return form, rest.Invalid("body", "", "malformed multipart body: "+err.Error(), nil)
		}
		name, err := rest.PartName(part)
		if err != nil {
			return form, err
		}
		switch {
		case name == "HttpFile":
			if err := receive(part, &form); err != nil {
				return form, err
			}
			form.Given[name] = true
		case slices.Contains(textParts, name):
			v, err := io.ReadAll(io.LimitReader(part, 4097))
			if errors.Is(err, fileservice.ErrTooLarge) {
				return form, err
			}
			if err != nil {
				return form, rest.Invalid("body", name, "cannot read the part: "+err.Error(), nil)
			}
			if len(v) > 4096 {
				return form, invalidPart(name, "must be at most 4096 bytes", nil)
			}
			if err := setPart(&form, name, string(v)); err != nil {
				return form, err
			}
		default:
			// As a JSON body's unknown property is refused, so is an
			// unknown part: a misspelt FolderName must not be dropped.
			return form, invalidPart(name, "unknown part: the parts are HttpFile, "+strings.Join(textParts, ", "), nil)
		}
		part.Close()
	}
	var missing []rest.ValidationFailure
	for _, name := range []string{"FileName", "ContentType", "ContentLength", "HttpFile"} {
		if !form.Given[name] {
			missing = append(missing, rest.Failure("body", name, "required part is missing", nil))
		}
	}
	if len(missing) > 0 {
		return form, rest.Problem(http.StatusBadRequest, "validation failed", missing...)
	}
	return form, nil
}

// uploadProblem maps an error of the file service to its problem.
func (h *handlers) uploadProblem(err error) error {
	var (
		fields      fileservice.FieldsError
		tooLarge    *fileservice.ImageTooLargeError
		timeout     *fileservice.TimeoutError
		field       *fileservice.FieldError
		unsupported *fileservice.UnsupportedError
		exists      *fileservice.ExistsError
		unavailable *fileservice.UnavailableError
	)
	switch {
	case errors.Is(err, fileservice.ErrTooLarge):
		var part *fileservice.TooLargeError
		if errors.As(err, &part) {
			return rest.Problem(http.StatusRequestEntityTooLarge, fmt.Sprintf("the file is larger than the limit of %d bytes", h.uploads.Limit),
				rest.Failure("body", part.Field, "is larger than the limit", part.Value))
		}
		return rest.Problem(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("the form is larger than %d bytes: the file's limit of %d bytes and 1 MiB for its other parts", h.uploads.Limit+1<<20, h.uploads.Limit),
			rest.Failure("body", "", "is larger than the upload's limit", nil))
	case errors.As(err, &field):
		return invalidPart(field.Field, field.Message, field.Value)
	case errors.As(err, &fields):
		var fs []rest.ValidationFailure
		for _, f := range fields {
			fs = append(fs, rest.Failure("body", f.Field, f.Message, f.Value))
		}
		return rest.Problem(http.StatusBadRequest, "validation failed", fs...)
	case errors.As(err, &tooLarge):
		return rest.Problem(http.StatusRequestEntityTooLarge, "the image is too large to decode: "+tooLarge.Message,
			rest.Failure("body", "HttpFile", "is too large to decode: "+tooLarge.Message, nil))
	case errors.As(err, &timeout):
		return rest.Problem(http.StatusServiceUnavailable, fmt.Sprintf(
			"processing the file did not finish within %s (the worker is busy or slow): the upload is cancelled and nothing of it is kept; send it again later",
			timeout.After)).WithHeader("Retry-After", "30")
	case errors.As(err, &unsupported):
		return rest.Problem(http.StatusUnsupportedMediaType, unsupported.Message)
	case errors.As(err, &exists):
		return rest.Conflict(fmt.Sprintf("a file named %s exists; delete it first to replace it", exists.FullName))
	case errors.As(err, &unavailable):
		return rest.Unavailable(unavailable.Dependency, unavailable.Err)
	}
	return err
}
