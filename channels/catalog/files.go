package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/media"
	"github.com/tocsin/tocsin/storage"
)

// fileUse says which stored files serve a use of a channel.
type fileUse struct {
	// kind is the kind of file that serves (media.Audio; "" any), and
	// user what uses it, for the refusal of another kind.
	kind, user string
	// versions are the versions (file_assets kinds) that serve, best
	// first, and types the content types one must have (nil: any).
	versions, types []string
	// noVersion says what to do about a file of the kind without one of
	// the versions.
	noVersion string
}

var fileUses = map[string]fileUse{
	alert.FileVoice: {kind: media.Audio, user: "a call plays", versions: []string{"voice", "original"}},
	alert.FileEas: {kind: media.Audio, user: "EAS broadcasts", versions: []string{"eas"},
		noVersion: "has no EAS version: delete it and upload it again with EncodeForEasAudio"},
	alert.FileDocument: {user: "a fax sends", versions: []string{"original"}, types: fax.Accepted},
}

// Resolve finds the object key of the version that use (alert.FileVoice,
// FileEas, FileDocument) needs of the tenant's stored file name: name is
// the file's full name (folder/name, as the files operations name it) or,
// when only one file has it, its name without the folder. assets are the
// versions of the tenant's files named so (storage.FileAssetsNamed). When
// no file serves, the error says why, in words for the alert's author: no
// such file, several files of that name, a file of the wrong kind (an
// image where audio is played), or one without the version the channel
// needs.
func Resolve(use, name string, assets []storage.FileAsset) (string, error) {
	var full, short []int64
	for _, a := range assets {
		if a.FullName == name && !slices.Contains(full, a.FileID) {
			full = append(full, a.FileID)
		}
		if a.FileName == name && !slices.Contains(short, a.FileID) {
			short = append(short, a.FileID)
		}
	}
	file := int64(0)
	switch {
	case len(full) == 1:
		file = full[0]
	case len(short) == 1:
		file = short[0]
	case len(short) > 1:
		var names []string
		for _, a := range assets {
			if slices.Contains(short, a.FileID) && !slices.Contains(names, a.FullName) {
				names = append(names, a.FullName)
			}
		}
		slices.Sort(names)
		return "", fmt.Errorf("%d stored files are named %s (%s): give the full name", len(names), name, strings.Join(names, ", "))
	default:
		return "", errors.New("no stored file " + name)
	}
	u, ok := fileUses[use]
	if !ok {
		return "", fmt.Errorf("no channel uses stored files for %s", use)
	}
	var mine []storage.FileAsset
	for _, a := range assets {
		if a.FileID == file {
			mine = append(mine, a)
		}
	}
	if k := mine[0].FileKind; u.kind != "" && k != u.kind {
		return "", fmt.Errorf("%s is %s %s file; %s %s files", name, article(k), k, u.user, u.kind)
	}
	for _, v := range u.versions {
		for _, a := range mine {
			if a.Kind != v {
				continue
			}
			if u.types != nil && !slices.Contains(u.types, a.ContentType) {
				return "", fmt.Errorf("%s is %s; %s %s only", name, a.ContentType, u.user, strings.Join(u.types, ", "))
			}
			return a.Key, nil
		}
	}
	if u.noVersion != "" {
		return "", fmt.Errorf("%s %s", name, u.noVersion)
	}
	return "", fmt.Errorf("%s has no %s version", name, strings.Join(u.versions, " or "))
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
