package model

import (
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// FileKind says whether a file is an image or audio.
type FileKind string

// Schema implements huma.SchemaProvider.
func (FileKind) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[FileKind](r, "image: PNG, JPEG, GIF, WebP or BMP. audio: WAV (integer PCM) or MP3.", "image", "audio")
}

// AssetKind names one stored version of a file.
type AssetKind string

// Schema implements huma.SchemaProvider.
func (AssetKind) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[AssetKind](r,
		"original: the uploaded bytes. resized: the image scaled down to MaxWidth (ResizeImage). voice: telephony audio, 8 kHz mono 16-bit PCM WAV (EncodeForVoiceAudio). eas: broadcast alerting audio, 22.05 kHz mono 16-bit PCM WAV of at most 2 minutes (EncodeForEasAudio).",
		"original", "resized", "voice", "eas")
}

// FileDetails describes the media of a file or of one of its versions.
type FileDetails struct {
	Format        string `json:"format,omitempty" doc:"The decoded format: png, jpeg, gif, webp, bmp, wav or mp3." example:"wav"`
	Width         int    `json:"width,omitempty" minimum:"0" doc:"Images: width in pixels." example:"640"`
	Height        int    `json:"height,omitempty" minimum:"0" doc:"Images: height in pixels." example:"480"`
	DurationMs    int64  `json:"durationMs,omitempty" minimum:"0" doc:"Audio: length in milliseconds." example:"12500"`
	SampleRate    int    `json:"sampleRate,omitempty" minimum:"0" doc:"Audio: samples per second." example:"8000"`
	Channels      int    `json:"channels,omitempty" minimum:"0" doc:"Audio: channels (WAV only)." example:"1"`
	BitsPerSample int    `json:"bitsPerSample,omitempty" minimum:"0" doc:"Audio: bits per sample (WAV only)." example:"16"`
}

// AssetInformation is one stored version of a file: the original or an
// encoded version.
type AssetInformation struct {
	Kind         AssetKind   `json:"kind"`
	ContentType  string      `json:"contentType" doc:"The version's content type." example:"audio/wav"`
	SizeBytes    int64       `json:"sizeBytes" minimum:"0" doc:"Size in bytes." example:"200044"`
	Sha256       string      `json:"sha256" pattern:"^[0-9a-f]{64}$" doc:"Hex SHA-256 of the bytes." example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	Details      FileDetails `json:"details"`
	URL          string      `json:"url,omitempty" format:"uri" doc:"A presigned URL that downloads the version until urlExpiresAt. Always given by uploadFileV4, getFileV4 and updateFileDescriptionV4; by getAllFilesV4 only for audio with IncludeAudioUrls=true."`
	URLExpiresAt *time.Time  `json:"urlExpiresAt,omitempty" doc:"When url stops working (15 minutes after the answer)."`
}

// FileModel is a stored file with its versions.
type FileModel struct {
	FileName    string             `json:"fileName" doc:"The file's full name: its folder, a slash and its name (the FileName path parameter, with / encoded as %2F)." example:"sirens/tornado.wav"`
	Name        string             `json:"name" doc:"The name within the folder." example:"tornado.wav"`
	FolderName  string             `json:"folderName,omitempty" doc:"The folder; empty at the top." example:"sirens"`
	Kind        FileKind           `json:"kind"`
	ContentType string             `json:"contentType" doc:"The original's content type, as detected from its bytes." example:"audio/wav"`
	SizeBytes   int64              `json:"sizeBytes" minimum:"0" doc:"The original's size in bytes." example:"882044"`
	Sha256      string             `json:"sha256" pattern:"^[0-9a-f]{64}$" doc:"Hex SHA-256 of the original." example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`
	Description string             `json:"description" doc:"Free text about the file." example:"Tornado siren, 10 s"`
	Details     FileDetails        `json:"details"`
	Assets      []AssetInformation `json:"assets" doc:"The stored versions: always the original, and the encoded ones asked for at upload."`
	CreatedAt   time.Time          `json:"createdAt" doc:"When the file was uploaded."`
	UpdatedAt   time.Time          `json:"updatedAt" doc:"When the file or its description last changed."`
}

// FileModelResponse is the answer of updateFileDescriptionV4.
type FileModelResponse struct {
	File    FileModel `json:"file"`
	Message string    `json:"message" doc:"What was done." example:"description updated"`
}
