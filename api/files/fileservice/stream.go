package fileservice

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/media"
)

// receive streams the file to the object store, checking its type from its
// first bytes, its size against the limit and (when ContentLength came
// first) against ContentLength. What came of the form before the file is
// checked before the bytes travel.
func (u *upload) receive(ctx context.Context, part io.Reader, form *Form) error {
	if u.file != nil {
		return invalid("HttpFile", "given more than once", nil)
	}
	limit := u.s.Limit
	br := bufio.NewReaderSize(part, media.SniffLen)
	head, err := br.Peek(media.SniffLen)
	if errors.Is(err, ErrTooLarge) {
		return ErrTooLarge // the parts before the file filled the body's cap
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return invalid("HttpFile", "cannot read the file: "+err.Error(), nil)
	}
	if len(head) == 0 {
		return invalid("HttpFile", "is empty", nil)
	}
	sniffed := media.Sniff(head)
	if media.Kind(sniffed) == "" {
		return &UnsupportedError{fmt.Sprintf(
			"the file's bytes are %s; accepted are images (PNG, JPEG, GIF, WebP, BMP) and audio (WAV, MP3)", sniffed)}
	}
	if form.Given["ContentType"] {
		if err := u.checkType(form, sniffed); err != nil {
			return err
		}
	}
	if sniffed == media.WAV {
		// Audio tocsin does not take is refused before its bytes travel.
		if err := media.CheckWAVHead(head); err != nil {
			return invalid("HttpFile", strings.TrimPrefix(err.Error(), media.ErrOutOfBounds.Error()+": "), nil)
		}
	}
	// Fail early, before the bytes travel, when the name is already wrong.
	if form.Given["FileName"] {
		if err := CheckPath(form.FileName); err != nil {
			return invalid("FileName", err.Error(), form.FileName)
		}
		if form.Given["FolderName"] {
			if err := u.checkName(ctx, form); err != nil {
				return err
			}
		}
	}
	if form.Given["ContentLength"] && form.ContentLength > limit {
		return &TooLargeError{Field: "ContentLength", Value: form.ContentLength}
	}

	h := sha256.New()
	src := &sourceReader{r: io.TeeReader(br, h)}
	key := u.prefix + activities.AssetOriginal
	var size int64
	opts := minio.PutObjectOptions{ContentType: sniffed, DisableMultipart: true}
	objects := u.s.Objects
	if form.Given["ContentLength"] {
		// The size is known: stream straight to the object store.
		size = form.ContentLength
		lr := &exactReader{r: src, left: size}
		if err := u.claim(ctx); err != nil {
			return err
		}
		u.file = &stored{key: key} // from here on the object may exist
		_, perr := objects.Client.PutObject(ctx, objects.Bucket, key, lr, size, opts)
		switch {
		case errors.Is(src.err, ErrTooLarge):
			// At most ContentLength (within the limit) of the file was
			// read: the parts before it filled the body's cap.
			return ErrTooLarge
		case src.err != nil:
			return invalid("HttpFile", "the upload was interrupted: "+src.err.Error(), nil)
		case lr.short:
			return invalid("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has %d", size, size-lr.left), size)
		case perr != nil:
			return &UnavailableError{"the object store", perr}
		}
		if n, _ := br.Read(make([]byte, 1)); n > 0 {
			return invalid("ContentLength", fmt.Sprintf("says %d bytes but HttpFile has more", size), size)
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
		case size > limit:
			return &TooLargeError{Field: "HttpFile"}
		case errors.Is(err, ErrTooLarge):
			return ErrTooLarge // the parts before the file filled the body's cap
		case src.err != nil:
			return invalid("HttpFile", "the upload was interrupted: "+src.err.Error(), nil)
		case err != nil:
			return fmt.Errorf("spool upload: %w", err)
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := u.claim(ctx); err != nil {
			return err
		}
		u.file = &stored{key: key}
		if _, err := objects.Client.PutObject(ctx, objects.Bucket, key, tmp, size, opts); err != nil {
			return &UnavailableError{"the object store", err}
		}
	}
	u.file = &stored{key: key, size: size, sha256: hex.EncodeToString(h.Sum(nil)), contentType: sniffed}
	return nil
}

// cappedReader fails with ErrTooLarge once left bytes are read.
type cappedReader struct {
	r    io.Reader
	left int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
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
