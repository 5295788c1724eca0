package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/media"
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
			d, ct, resized, err := media.ResizeImage(orig, in.ContentType, in.MaxWidth, tmp)
			if err != nil || !resized {
				return mediaError(err)
			}
			ext := ".png"
			if ct == media.JPEG {
				ext = ".jpg"
			}
			asset, err := a.storeAsset(ctx, tmp, in.Prefix+AssetResized+ext, ct)
			asset.Kind, asset.Details = AssetResized, d
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
	o := a.Objects
	for obj := range o.Client.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("list %s: %w", prefix, obj.Err)
		}
		if err := o.Client.RemoveObject(ctx, o.Bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("remove %s: %w", obj.Key, err)
		}
	}
	return nil
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
