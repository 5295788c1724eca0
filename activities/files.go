package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
)

// The encodings of stored audio.
const (
	// VoiceRate is the sample rate of telephony audio: 8 kHz mono 16-bit PCM WAV.
	VoiceRate = 8000
	// EasRate is the sample rate of broadcast (EAS) audio: 22.05 kHz mono
	// 16-bit PCM WAV, which EAS encoder/decoders play.
	EasRate = 22050
	// MaxEncodedDuration is the longest audio of which a voice or EAS
	// version is made: the longest EAS audio message (47 CFR 11.33: two
	// minutes), and the same for voice, so what an encoding writes and the
	// time it takes are bounded (a voice version is at most 1.9 MB, an EAS
	// one 5.3 MB).
	MaxEncodedDuration = 2 * time.Minute
)

// Error types of ProcessFile that retries will not fix.
const (
	ErrTypeInvalidMedia     = "InvalidMedia"
	ErrTypeUnsupportedMedia = "UnsupportedMedia"
	ErrTypeAudioTooLong     = "AudioTooLong"
	// ErrTypeAudioOutOfBounds: a sample rate or channel count tocsin does not take.
	ErrTypeAudioOutOfBounds = "AudioOutOfBounds"
	// ErrTypeImageTooLarge: more pixels, or more bytes decoded, than tocsin decodes.
	ErrTypeImageTooLarge = "ImageTooLarge"
)

// The asset kinds stored beside an original.
const (
	AssetOriginal = "original"
	AssetResized  = "resized"
	AssetVoice    = "voice"
	AssetEas      = "eas"
)

// ProcessFileInput names an uploaded original and the versions wanted.
type ProcessFileInput struct {
	Tenant      string
	Prefix      string // object key prefix of the file's assets
	OriginalKey string
	ContentType string
	// MaxWidth > 0 asks for a version at most that wide (images).
	MaxWidth int
	// Voice and Eas ask for the telephony and broadcast encodings (audio).
	Voice, Eas bool
}

// FileAsset is one stored version of a file.
type FileAsset struct {
	Kind        string
	Key         string
	ContentType string
	SizeBytes   int64
	SHA256      string
	Details     media.Details
}

// ProcessFileResult describes the original and the versions made.
type ProcessFileResult struct {
	Details media.Details
	Assets  []FileAsset
}

func mediaError(err error) error {
	switch {
	case errors.Is(err, media.ErrUnsupported):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeUnsupportedMedia, nil)
	case errors.Is(err, media.ErrTooLong):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeAudioTooLong, nil)
	case errors.Is(err, media.ErrOutOfBounds):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeAudioOutOfBounds, nil)
	case errors.Is(err, media.ErrTooLarge):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeImageTooLarge, nil)
	case errors.Is(err, media.ErrInvalid):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidMedia, nil)
	}
	return err
}

// ProcessFile checks that an uploaded original decodes, reads its details
// and stores the requested versions beside it: a scaled-down image, voice
// audio and EAS audio. Keys are fixed per file, so a retry overwrites.
// Images are decoded in one of the worker's image decoding slots
// (TOCSIN_IMAGE_DECODE_CONCURRENCY), waiting for one if need be. It
// heartbeats, so a cancelled upload stops it within the heartbeat timeout.
func (a *Activities) ProcessFile(ctx context.Context, in ProcessFileInput) (ProcessFileResult, error) {
	defer heartbeat(ctx)()
	orig, err := os.CreateTemp("", "tocsin-original-*")
	if err != nil {
		return ProcessFileResult{}, fmt.Errorf("temp file: %w", err)
	}
	defer os.Remove(orig.Name())
	defer orig.Close()
	obj, err := a.Objects.Client.GetObject(ctx, a.Objects.Bucket, in.OriginalKey, minio.GetObjectOptions{})
	if err != nil {
		return ProcessFileResult{}, fmt.Errorf("get original: %w", err)
	}
	_, err = io.Copy(orig, obj)
	obj.Close()
	if err != nil {
		return ProcessFileResult{}, fmt.Errorf("read original: %w", err)
	}
	rewind := func() error { _, err := orig.Seek(0, io.SeekStart); return err }
	if err := rewind(); err != nil {
		return ProcessFileResult{}, err
	}

	var res ProcessFileResult
	kind := media.Kind(in.ContentType)
	switch kind {
	case media.Image:
		release, err := a.imageSlot(ctx)
		if err != nil {
			return res, err
		}
		defer release()
		if in.MaxWidth > 0 {
			// ResizeImage checks the image too, decoding it once for both.
			break
		}
		res.Details, err = media.VerifyImage(orig)
		if err != nil {
			return res, mediaError(err)
		}
	case media.Audio:
		res.Details, err = media.InspectAudio(orig, in.ContentType)
		if err != nil {
			return res, mediaError(err)
		}
		if (in.Voice || in.Eas) && time.Duration(res.Details.DurationMs)*time.Millisecond > MaxEncodedDuration {
			return res, mediaError(fmt.Errorf("%w: the audio lasts %.1f s", media.ErrTooLong, float64(res.Details.DurationMs)/1000))
		}
	default:
		return res, mediaError(fmt.Errorf("%w: %s", media.ErrUnsupported, in.ContentType))
	}

	if in.MaxWidth > 0 && kind == media.Image {
		if err := rewind(); err != nil {
			return res, err
		}
		err := a.withTemp(func(tmp *os.File) error {
			d, v, err := media.ResizeImage(orig, in.ContentType, in.MaxWidth, tmp)
			res.Details = d
			if err != nil || v == nil {
				return mediaError(err)
			}
			ext := ".png"
			if v.ContentType == media.JPEG {
				ext = ".jpg"
			}
			asset, err := a.storeAsset(ctx, tmp, in.Prefix+AssetResized+ext, v.ContentType)
			asset.Kind, asset.Details = AssetResized, v.Details
			res.Assets = append(res.Assets, asset)
			return err
		})
		if err != nil {
			return res, err
		}
	}
	for _, enc := range []struct {
		want bool
		kind string
		rate int
	}{{in.Voice, AssetVoice, VoiceRate}, {in.Eas, AssetEas, EasRate}} {
		if !enc.want || kind != media.Audio {
			continue
		}
		if err := rewind(); err != nil {
			return res, err
		}
		err := a.withTemp(func(tmp *os.File) error {
			d, err := media.EncodeWAV(ctx, orig, in.ContentType, enc.rate, MaxEncodedDuration, tmp)
			if err != nil {
				return mediaError(err)
			}
			asset, err := a.storeAsset(ctx, tmp, in.Prefix+enc.kind+".wav", media.WAV)
			asset.Kind, asset.Details = enc.kind, d
			res.Assets = append(res.Assets, asset)
			return err
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// RemoveUpload removes every object under an upload's prefix (the
// original and the versions ProcessFile stored): the ProcessFile workflow
// runs it when processing failed or was cancelled, after the processing has
// stopped, so nothing it wrote is left behind.
func (a *Activities) RemoveUpload(ctx context.Context, prefix string) error {
	if !strings.HasPrefix(prefix, "tenants/") || !strings.HasSuffix(prefix, "/") || strings.Count(prefix, "/") < 4 {
		return temporal.NewNonRetryableApplicationError("not an upload's prefix: "+prefix, ErrTypeInvalidMedia, nil)
	}
	_, err := a.Objects.RemovePrefix(ctx, prefix)
	return err
}

// UploadSweep is what SweepUploadOrphans did.
type UploadSweep struct {
	// Uploads is how many expired claims were swept and deleted, Objects
	// how many objects of theirs were removed.
	Uploads, Objects int
	// Kept is how many expired claims were kept for a later sweep: their
	// processing was still running (it is cancelled, and then removes what
	// it wrote), or a removal failed.
	Kept int
}

// orphanRetry is when a sweep looks again at a claim it kept.
const orphanRetry = 5 * time.Minute

// errStillProcessing: the claim's ProcessFile run was running.
var errStillProcessing = errors.New("the upload's processing was still running")

// SweepUploadOrphans removes what uploads whose process died (killed,
// out of memory, redeployed) between storing their first object and
// recording their file, or the alert they came with, left in the object
// store. It takes up to batch expired upload claims of every tenant
// (files.Store.SweepClaims), and for each makes sure the upload's
// processing, if it has one, writes nothing more (a start still waiting in
// the outbox is withdrawn; a run still going is cancelled, removes what it
// wrote itself, and its claim is looked at again later), then removes
// every object under the claim's prefix, which lies inside the claim's
// tenant, and deletes the claim. It counts the objects in
// tocsin_upload_orphan_objects_removed_total and logs each upload it
// swept. A repeated sweep finds nothing more to do.
func (a *Activities) SweepUploadOrphans(ctx context.Context, batch int) (UploadSweep, error) {
	tc := activity.GetClient(ctx)
	var res UploadSweep
	var err error
	res.Uploads, res.Kept, err = files.New(a.DB, a.Objects).SweepClaims(ctx, batch, orphanRetry, func(c files.UploadClaim) error {
		err := a.sweepUpload(ctx, tc, c, &res)
		if err != nil && !errors.Is(err, errStillProcessing) && a.Logger != nil {
			a.Logger.Warn("upload orphan sweep: claim kept for a later sweep", "tenant", c.Tenant, "prefix", c.Prefix, "err", err)
		}
		return err
	})
	return res, err
}

// sweepUpload empties the prefix of one expired claim once nothing writes
// under it any more.
func (a *Activities) sweepUpload(ctx context.Context, tc client.Client, c files.UploadClaim, res *UploadSweep) error {
	if !isUploadPrefix(c.Tenant, c.Prefix) {
		return fmt.Errorf("not an upload's prefix of the tenant")
	}
	if c.WorkflowID != "" {
		if err := stopProcessing(ctx, tc, a.DB, c); err != nil {
			return err
		}
	}
	n, err := a.Objects.RemovePrefix(ctx, c.Prefix)
	res.Objects += n
	a.state().orphanObjects.Add(float64(n))
	if n > 0 && a.Logger != nil {
		a.Logger.Info("removed the objects of an upload whose process died before recording them",
			"tenant", c.Tenant, "prefix", c.Prefix, "objects", n, "claimed_at", c.CreatedAt)
	}
	return err
}

// stopProcessing makes sure that the ProcessFile run of claim c writes
// nothing more: its start is withdrawn if it still waits, and a run still
// going is cancelled (errStillProcessing: it removes what it wrote itself,
// and the claim is looked at again later).
func stopProcessing(ctx context.Context, tc client.Client, db *storage.DB, c files.UploadClaim) error {
	if _, err := storage.CancelStart(ctx, db, c.Tenant, c.WorkflowID); err != nil {
		return err
	}
	d, err := tc.DescribeWorkflowExecution(ctx, c.WorkflowID, "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
	case err != nil:
		return fmt.Errorf("describe the upload's processing: %w", err)
	case d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		if err := tc.CancelWorkflow(ctx, c.WorkflowID, ""); err != nil && !errors.As(err, &notFound) {
			return fmt.Errorf("cancel the upload's processing: %w", err)
		}
		return errStillProcessing
	}
	return nil
}

// isUploadPrefix reports whether prefix is the prefix of one upload of
// tenant: a file's, tenants/<tenant>/files/<upload>/, or the attachment
// uploaded with an alert, tenants/<tenant>/alerts/<id>-<tag>/ or, claimed
// before tags came, tenants/<tenant>/alerts/<id>/ (storage.AttachmentPrefix).
func isUploadPrefix(tenant, prefix string) bool {
	if rest, ok := strings.CutPrefix(prefix, storage.TenantKey(tenant, "alerts/")); ok {
		num, tag, tagged := strings.Cut(strings.TrimSuffix(rest, "/"), "-")
		id, err := strconv.ParseInt(num, 10, 64)
		return err == nil && (!tagged || alert.IsTag(tag)) && prefix == storage.AttachmentPrefix(tenant, id, tag)
	}
	rest, ok := strings.CutPrefix(prefix, storage.TenantKey(tenant, "files/"))
	id, end := strings.CutSuffix(rest, "/")
	return ok && end && id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\")
}

// imageSlot waits for one of the worker process's image decoding slots and
// returns what frees it.
func (a *Activities) imageSlot(ctx context.Context) (release func(), err error) {
	st := a.state()
	select {
	case st.imageSlots <- struct{}{}:
	default:
		st.imageWaits.Inc()
		select {
		case st.imageSlots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	st.imageDecodes.Inc()
	return func() { st.imageDecodes.Dec(); <-st.imageSlots }, nil
}

func (a *Activities) withTemp(fn func(*os.File) error) error {
	f, err := os.CreateTemp("", "tocsin-encoded-*")
	if err != nil {
		return fmt.Errorf("temp file: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	return fn(f)
}

// storeAsset uploads f under key and returns its size and checksum.
func (a *Activities) storeAsset(ctx context.Context, f *os.File, key, contentType string) (FileAsset, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return FileAsset{}, err
	}
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return FileAsset{}, fmt.Errorf("hash %s: %w", key, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return FileAsset{}, err
	}
	if _, err := a.Objects.Client.PutObject(ctx, a.Objects.Bucket, key, f, size,
		minio.PutObjectOptions{ContentType: contentType, DisableMultipart: true}); err != nil {
		return FileAsset{}, fmt.Errorf("store %s: %w", key, err)
	}
	return FileAsset{Key: key, ContentType: contentType, SizeBytes: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
