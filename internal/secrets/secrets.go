// Package secrets encrypts values tocsin must recover later (hook signing
// secrets, provider credentials) with AES-256-GCM under a key derived from
// TOCSIN_SECRETS_KEY.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// version prefixes every ciphertext, so the scheme can change later.
const version byte = 1

// Box seals and opens secrets with one key.
type Box struct {
	aead cipher.AEAD
}

// New derives the AES-256 key as the SHA-256 of key (any string; use at least
// 32 random bytes, for example `openssl rand -base64 32`).
func New(key string) (*Box, error) {
	if key == "" {
		return nil, errors.New("the secrets key is empty")
	}
	sum := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, fmt.Errorf("secrets cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets cipher: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext. associated binds the ciphertext to its owner (for
// example the tenant), so it cannot be moved to another row.
func (b *Box) Seal(plaintext, associated []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secrets nonce: %w", err)
	}
	out := append([]byte{version}, nonce...)
	return b.aead.Seal(out, nonce, plaintext, associated), nil
}

// Open decrypts what Seal produced with the same associated data.
func (b *Box) Open(ciphertext, associated []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(ciphertext) < 1+n || ciphertext[0] != version {
		return nil, errors.New("secrets: not a sealed value")
	}
	plain, err := b.aead.Open(nil, ciphertext[1:1+n], ciphertext[1+n:], associated)
	if err != nil {
		return nil, errors.New("secrets: cannot open the value (wrong TOCSIN_SECRETS_KEY?)")
	}
	return plain, nil
}
