package directory

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
)

// Kind is what an address is: an email address or a phone number.
type Kind string

// The kinds of verified addresses.
const (
	KindEmail Kind = "email"
	KindPhone Kind = "phone"
)

// TargetType is the kind's name in events: Email or Phone.
func (k Kind) TargetType() string {
	if k == KindPhone {
		return "Phone"
	}
	return "Email"
}

// Limits of verification.
const (
	// NonceLimit nonces may be reserved for one address of a tenant within
	// NonceWindow; more are refused with 429.
	NonceLimit  = 5
	NonceWindow = 15 * time.Minute
	// NonceTTL is how long a reserved nonce may be spent on a resend.
	NonceTTL = 15 * time.Minute
	// NonceRetention is how long reserved nonces and the rate limit's
	// counts are kept (PruneNonces): a nonce cannot be reserved again for
	// its address within it.
	NonceRetention = 24 * time.Hour
	// CodeDigits is the length of a verification code.
	CodeDigits = 6
	// MaxAttempts wrong codes kill a code.
	MaxAttempts = 5
)

// Errors of the verification flow.
var (
	ErrNonceInvalid    = errors.New("the nonce is unknown, spent or expired")
	ErrAlreadyVerified = errors.New("the address is already verified")
	// ErrCannotText: the phone number cannot take texts (a fax, or one
	// added with canText false), so no code can reach it.
	ErrCannotText = errors.New("the phone number cannot take texts")
)

// RateLimitedError says how long to wait before another nonce is allowed.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("too many nonces for this address; retry after %s", e.RetryAfter)
}

// NewCode returns a cryptographically random code of CodeDigits digits.
func NewCode() (string, error) {
	limit := big.NewInt(1)
	for range CodeDigits {
		limit.Mul(limit, big.NewInt(10))
	}
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return "", fmt.Errorf("random code: %w", err)
	}
	return fmt.Sprintf("%0*d", CodeDigits, n), nil
}

// HashCode hashes a code with its salt under key (CodeKey); only the hash
// is stored. A code has CodeDigits digits: a hash anyone could compute
// would give a live code back to whoever reads the row, in a million
// guesses; keyed, the row alone tells nothing.
func HashCode(key, salt []byte, code string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(salt)
	m.Write([]byte(code))
	return m.Sum(nil)
}

// codeMatches reports whether code is the one hash was made of with salt:
// under key (HashCode), or without a key, as versions before the key
// stored codes (SHA-256 of salt and code), so that a code one of them
// stored during a rolling upgrade still verifies while it lives
// (TOCSIN_VERIFICATION_CODE_TTL). The unkeyed hash of a code matches only
// such a row: a keyed hash is the plain hash of no code.
func codeMatches(key, salt, hash []byte, code string) bool {
	plain := sha256.New()
	plain.Write(salt)
	plain.Write([]byte(code))
	keyed := subtle.ConstantTimeCompare(HashCode(key, salt, code), hash)
	return keyed|subtle.ConstantTimeCompare(plain.Sum(nil), hash) == 1
}

// CodeKey derives the key HashCode hashes codes under from the secrets
// key (TOCSIN_SECRETS_KEY).
func CodeKey(secretsKey string) ([]byte, error) {
	key, err := secrets.Derive(secretsKey, "verification code")
	if err != nil {
		return nil, fmt.Errorf("verification code key: %w", err)
	}
	return key, nil
}

// NewSalt returns a random salt for HashCode.
func NewSalt() ([]byte, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("random salt: %w", err)
	}
	return b, nil
}

// ContactStatus reads the verification status of the person's address.
func ContactStatus(ctx context.Context, q Querier, tenant string, person int64, kind Kind, address string) (storage.VerificationStatus, error) {
	t := kind.addresses()
	return storage.GetOne[storage.VerificationStatus](ctx, q, "read verification status", `SELECT verification_status FROM `+t.table+` WHERE `+t.match(), tenant, person, address)
}

// AddressID returns the row id of the person's address of kind k; an
// address removed and added again has a new one. None is ErrNotFound.
func AddressID(ctx context.Context, q Querier, tenant string, person int64, k Kind, address string) (int64, error) {
	t := k.addresses()
	return storage.GetOne[int64](ctx, q, "read address", `SELECT id FROM `+t.table+` WHERE `+t.match(), tenant, person, address)
}

// codeStatus reads the verification status of the person's address, which
// a code is about to be sent to: an address verified already is
// ErrAlreadyVerified, a phone number that cannot take texts ErrCannotText.
func codeStatus(ctx context.Context, q Querier, tenant string, person int64, kind Kind, address string) error {
	t := kind.addresses()
	canText := "true"
	if kind == KindPhone {
		canText = "can_text"
	}
	row, err := storage.GetOne[struct {
		Status  storage.VerificationStatus `db:"verification_status"`
		CanText bool                       `db:"can_text"`
	}](ctx, q, "read verification status", `SELECT verification_status, `+canText+` AS can_text FROM `+t.table+` WHERE `+t.match(), tenant, person, address)
	switch {
	case err != nil:
		return err
	case row.Status == storage.VerificationVerified:
		return ErrAlreadyVerified
	case !row.CanText:
		return ErrCannotText
	}
	return nil
}

func setContactStatus(ctx context.Context, q Querier, tenant string, person int64, kind Kind, address string, st storage.VerificationStatus) error {
	t := kind.addresses()
	if _, err := q.ExecContext(ctx, `UPDATE `+t.table+` SET verification_status = $4,
		verified_at = CASE WHEN $4 = 'Verified' THEN now() ELSE NULL END WHERE `+t.match(), tenant, person, address, string(st)); err != nil {
		return fmt.Errorf("set verification status: %w", err)
	}
	return nil
}

// NonceReservation is a reserved nonce.
type NonceReservation struct {
	ExpiresAt time.Time
	Remaining int
}

// ReserveNonce records a client nonce for the address, unless NonceLimit
// nonces were reserved for it (by any user of the tenant) within NonceWindow
// (RateLimitedError). The count outlives the address and its user, so that
// removing and adding the address again does not reset it; it is kept under
// addressKey, a keyed hash of the address, not under the address. Both the
// nonce and the count are kept until PruneNonces deletes them, at least
// NonceRetention. A nonce reserved for the address before is ErrConflict;
// an address already verified is ErrAlreadyVerified, a phone number that
// cannot take texts ErrCannotText (no nonce is reserved).
func ReserveNonce(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, kind Kind, address, nonce string, addressKey []byte) (NonceReservation, error) {
	if err := codeStatus(ctx, tx, tenant, person, kind, address); err != nil {
		return NonceReservation{}, err
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7))`,
		tenant+"\n"+string(kind)+"\n"+address); err != nil {
		return NonceReservation{}, fmt.Errorf("lock nonces: %w", err)
	}
	var w struct {
		Count  int          `db:"count"`
		Oldest sql.NullTime `db:"oldest"`
		Now    time.Time    `db:"now"`
	}
	if err := tx.GetContext(ctx, &w, `SELECT count(*) AS count, min(created_at) AS oldest, now() AS now FROM directory_nonce_window
		WHERE tenant_id = $1 AND kind = $2 AND address_hash = $3 AND created_at > now() - make_interval(secs => $4)`,
		tenant, kind, addressKey, NonceWindow.Seconds()); err != nil {
		return NonceReservation{}, fmt.Errorf("count nonces: %w", err)
	}
	if w.Count >= NonceLimit {
		wait := w.Oldest.Time.Add(NonceWindow).Sub(w.Now)
		if wait < time.Second {
			wait = time.Second
		}
		return NonceReservation{}, &RateLimitedError{RetryAfter: wait}
	}
	var exp time.Time
	err := tx.GetContext(ctx, &exp, `INSERT INTO directory_verification_nonces (tenant_id, person_id, kind, address, nonce, expires_at)
		VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) RETURNING expires_at`,
		tenant, person, kind, address, nonce, NonceTTL.Seconds())
	if storage.IsUniqueViolation(err, "directory_verification_nonces_nonce") {
		return NonceReservation{}, storage.ErrConflict
	}
	if err != nil {
		return NonceReservation{}, fmt.Errorf("insert nonce: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO directory_nonce_window (tenant_id, kind, address_hash)
		VALUES ($1, $2, $3)`, tenant, kind, addressKey); err != nil {
		return NonceReservation{}, fmt.Errorf("count nonce: %w", err)
	}
	return NonceReservation{ExpiresAt: exp, Remaining: NonceLimit - w.Count - 1}, nil
}

// PrunedNonces counts the rows one PruneNonces deleted.
type PrunedNonces struct {
	// Nonces are reserved nonces, spent or expired.
	Nonces int64
	// Counts are the rate limit's records of reservations.
	Counts int64
}

// PruneNonces deletes, for every tenant, up to limit reserved nonces and up
// to limit rate-limit counts created more than NonceRetention ago. Each
// table is pruned by a statement of its own, so no transaction holds many
// rows for long; a caller repeats it while a count comes back at limit.
func PruneNonces(ctx context.Context, db *storage.DB, limit int) (PrunedNonces, error) {
	var p PrunedNonces
	var err error
	if p.Nonces, err = pruneOld(ctx, db, "directory_verification_nonces", limit); err != nil {
		return p, fmt.Errorf("prune nonces: %w", err)
	}
	if p.Counts, err = pruneOld(ctx, db, "directory_nonce_window", limit); err != nil {
		return p, fmt.Errorf("prune nonce counts: %w", err)
	}
	return p, nil
}

// pruneOld deletes up to limit rows of table created more than
// NonceRetention ago, of every tenant, and returns how many it deleted.
func pruneOld(ctx context.Context, db *storage.DB, table string, limit int) (int64, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM `+table+` WHERE ctid IN (
		SELECT ctid FROM `+table+` WHERE created_at < now() - make_interval(secs => $1) LIMIT $2)`,
		NonceRetention.Seconds(), limit)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// BeginResend spends the nonce and numbers a new resend of the address,
// returning its sequence number. The code itself is stored by the workflow's
// activity (StoreCode) with that number, so only the newest resend's code
// is ever live. An address verified already is ErrAlreadyVerified, a phone
// number that cannot take texts ErrCannotText; neither spends the nonce.
func BeginResend(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, kind Kind, address, nonce, workflowID string) (int, error) {
	if err := codeStatus(ctx, tx, tenant, person, kind, address); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE directory_verification_nonces SET used_at = now()
		WHERE tenant_id = $1 AND person_id = $2 AND kind = $3 AND address = $4 AND nonce = $5 AND used_at IS NULL AND expires_at > now()`,
		tenant, person, kind, address, nonce)
	if err != nil {
		return 0, fmt.Errorf("spend nonce: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, ErrNonceInvalid
	}
	var seq int
	err = tx.GetContext(ctx, &seq, `
		INSERT INTO directory_verifications (tenant_id, person_id, kind, address, seq, workflow_id) VALUES ($1, $2, $3, $4, 1, $5)
		ON CONFLICT (person_id, kind, address) DO UPDATE SET seq = directory_verifications.seq + 1, workflow_id = excluded.workflow_id, updated_at = now()
		RETURNING seq`, tenant, person, kind, address, workflowID)
	if err != nil {
		return 0, fmt.Errorf("number resend: %w", err)
	}
	return seq, nil
}

// Code is a code to store for a resend.
type Code struct {
	Tenant  string
	Person  int64
	Kind    Kind
	Address string
	Seq     int
	Salt    []byte
	Hash    []byte
	// TestingCode is the plain code, stored only when the testing
	// operations are on; empty otherwise.
	TestingCode string
	TTL         time.Duration
}

// StoredCode says what StoreCode did.
type StoredCode struct {
	// Stored is false when a newer resend superseded this one or the
	// address (or its user) is gone: nothing must be sent.
	Stored    bool
	ExpiresAt time.Time
	// Language is the user's preferred language, for the message.
	Language string
}

// StoreCode makes c the address's live code (status Pending, no attempts
// used), if c.Seq is still the newest resend and the address is there and
// not verified.
func StoreCode(ctx context.Context, db *storage.DB, c Code) (StoredCode, error) {
	var out StoredCode
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := lockPerson(ctx, tx, c.Tenant, c.Person); err != nil {
			return err
		}
		// A code checked since the resend began may have verified the
		// address: a resend then sends nothing and leaves it Verified.
		switch st, err := ContactStatus(ctx, tx, c.Tenant, c.Person, c.Kind, c.Address); {
		case errors.Is(err, storage.ErrNotFound), err == nil && st == storage.VerificationVerified:
			return nil
		case err != nil:
			return err
		}
		var row struct {
			ExpiresAt time.Time `db:"expires_at"`
			Language  string    `db:"language"`
		}
		err := tx.GetContext(ctx, &row, `
			UPDATE directory_verifications v SET code_salt = $6, code_hash = $7, testing_code = NULLIF($8, ''), attempts = 0, max_attempts = $9,
				sent_at = now(), expires_at = now() + make_interval(secs => $10), status = 'Pending', failure = '', updated_at = now()
			FROM people p
			WHERE v.tenant_id = $1 AND v.person_id = $2 AND v.kind = $3 AND v.address = $4 AND v.seq = $5 AND p.id = v.person_id
			RETURNING v.expires_at, p.language`,
			c.Tenant, c.Person, c.Kind, c.Address, c.Seq, c.Salt, c.Hash, c.TestingCode, MaxAttempts, c.TTL.Seconds())
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store code: %w", err)
		}
		out = StoredCode{Stored: true, ExpiresAt: row.ExpiresAt, Language: row.Language}
		return setContactStatus(ctx, tx, c.Tenant, c.Person, c.Kind, c.Address, storage.VerificationPending)
	})
	return out, err
}

type verificationRow struct {
	ID          int64          `db:"id"`
	DirectoryID sql.NullString `db:"directory_id"`
	Status      string         `db:"status"`
	Seq         int            `db:"seq"`
	Salt        []byte         `db:"code_salt"`
	Hash        []byte         `db:"code_hash"`
	Attempts    int            `db:"attempts"`
	MaxAttempts int            `db:"max_attempts"`
	SentAt      sql.NullTime   `db:"sent_at"`
	ExpiresAt   sql.NullTime   `db:"expires_at"`
	Expired     bool           `db:"expired"`
}

func (r verificationRow) attempt() Attempt {
	a := Attempt{AttemptsUsed: r.Attempts, MaxAttempts: r.MaxAttempts, Status: storage.VerificationStatus(r.Status)}
	if r.SentAt.Valid {
		a.SentAt = &r.SentAt.Time
	}
	if r.ExpiresAt.Valid {
		a.ExpiresAt = &r.ExpiresAt.Time
	}
	return a
}

// lockPerson orders every transaction writing both an address and its
// verification: removing the address and storing, checking or settling its
// code. Without it the two lock the address and the verification rows in
// opposite orders and deadlock. It takes a KEY SHARE lock on the person's
// row, so that removing the user, whose cascade locks the rows the other
// way round, waits for it or comes first, and then a lock of the person's
// own (an advisory lock: a contacts import updating the person's row does
// not hold it up). The row comes first, as in the API's transactions,
// which lock the user's row before anything else. A person that is gone is
// not an error here; the statements that follow find nothing.
func lockPerson(ctx context.Context, tx *sqlx.Tx, tenant string, person int64) error {
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM people WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE`, tenant, person); err != nil {
		return fmt.Errorf("lock person: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 13))`, tenant+"\n"+strconv.FormatInt(person, 10)); err != nil {
		return fmt.Errorf("lock person: %w", err)
	}
	return nil
}

func lockVerification(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, kind Kind, address string) (verificationRow, error) {
	if err := lockPerson(ctx, tx, tenant, person); err != nil {
		return verificationRow{}, err
	}
	return storage.GetOne[verificationRow](ctx, tx, "lock verification", `
		SELECT v.id, p.directory_id, v.status, v.seq, v.code_salt, v.code_hash, v.attempts, v.max_attempts, v.sent_at, v.expires_at,
			coalesce(v.expires_at <= now(), false) AS expired
		FROM directory_verifications v JOIN people p ON p.id = v.person_id
		WHERE v.tenant_id = $1 AND v.person_id = $2 AND v.kind = $3 AND v.address = $4
		FOR UPDATE OF v`, tenant, person, kind, address)
}

// settle moves the verification to a final status, with the contact's status and the event.
func settle(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, kind Kind, address string, r *verificationRow, st storage.VerificationStatus, reason string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE directory_verifications SET status = $2, failure = $3, testing_code = NULL, updated_at = now() WHERE id = $1`,
		r.ID, st, reason); err != nil {
		return fmt.Errorf("settle verification: %w", err)
	}
	r.Status = string(st)
	if err := setContactStatus(ctx, tx, tenant, person, kind, address, st); err != nil {
		return err
	}
	v := events.Verification{UserID: strconv.FormatInt(person, 10), DirectoryID: r.DirectoryID.String,
		TargetType: string(kind.TargetType()), Address: address, Status: string(st)}
	if st == storage.VerificationVerified {
		_, err := storage.EmitEvent(ctx, tx, tenant, storage.EventVerificationDone, events.VerificationCompleted{Verification: v})
		return err
	}
	_, err := storage.EmitEvent(ctx, tx, tenant, storage.EventVerificationFailed, events.VerificationFailed{Verification: v, Reason: reason})
	return err
}

// CheckOutcome is what checking a code found.
type CheckOutcome int

// The outcomes of CheckCode.
const (
	// CheckVerified: the code matched; the address is verified.
	CheckVerified CheckOutcome = iota
	// CheckWrong: the code did not match; attempts remain.
	CheckWrong
	// CheckExhausted: the code did not match and that was the last attempt; the code is dead.
	CheckExhausted
	// CheckExpired: the code expired.
	CheckExpired
	// CheckDead: the code was killed earlier (attempts used up or undeliverable).
	CheckDead
	// CheckNoCode: no code has been sent (or the last one is not stored yet).
	CheckNoCode
	// CheckAlreadyVerified: the address was verified before.
	CheckAlreadyVerified
)

// CheckResult is the outcome with the state of the code.
type CheckResult struct {
	Outcome    CheckOutcome
	Attempt    Attempt
	VerifiedAt *time.Time
	Remaining  int
	// Seq is the resend the checked code belongs to.
	Seq int
}

// CheckCode compares code, hashed under key (CodeKey; see codeMatches for a
// code stored before the key), with the address's most recent code and records the outcome: Verified, a wrong attempt (the
// last allowed one kills the code: Failed), or Expired. Final outcomes emit their event in the same
// transaction.
func CheckCode(ctx context.Context, tx *sqlx.Tx, key []byte, tenant string, person int64, kind Kind, address, code string) (CheckResult, error) {
	st, err := ContactStatus(ctx, tx, tenant, person, kind, address)
	if err != nil {
		return CheckResult{}, err
	}
	r, err := lockVerification(ctx, tx, tenant, person, kind, address)
	if errors.Is(err, storage.ErrNotFound) {
		if st == storage.VerificationVerified {
			return CheckResult{Outcome: CheckAlreadyVerified}, nil
		}
		return CheckResult{Outcome: CheckNoCode}, nil
	}
	if err != nil {
		return CheckResult{}, err
	}
	res := CheckResult{Seq: r.Seq}
	switch {
	case r.Status == string(storage.VerificationVerified):
		res.Outcome = CheckAlreadyVerified
	case r.Status == string(storage.VerificationExpired):
		res.Outcome = CheckExpired
	case r.Status == string(storage.VerificationFailed):
		res.Outcome = CheckDead
	case r.Status != string(storage.VerificationPending) || r.Hash == nil:
		res.Outcome = CheckNoCode
	case r.Expired:
		if err := settle(ctx, tx, tenant, person, kind, address, &r, storage.VerificationExpired, "expired"); err != nil {
			return res, err
		}
		res.Outcome = CheckExpired
	case codeMatches(key, r.Salt, r.Hash, code):
		if err := settle(ctx, tx, tenant, person, kind, address, &r, storage.VerificationVerified, ""); err != nil {
			return res, err
		}
		res.Outcome = CheckVerified
		now := time.Now().UTC()
		res.VerifiedAt = &now
	default:
		r.Attempts++
		if _, err := tx.ExecContext(ctx, `UPDATE directory_verifications SET attempts = $2, updated_at = now() WHERE id = $1`, r.ID, r.Attempts); err != nil {
			return res, fmt.Errorf("count attempt: %w", err)
		}
		res.Outcome, res.Remaining = CheckWrong, r.MaxAttempts-r.Attempts
		if res.Remaining <= 0 {
			res.Remaining = 0
			res.Outcome = CheckExhausted
			if err := settle(ctx, tx, tenant, person, kind, address, &r, storage.VerificationFailed, "wrong-code-attempts"); err != nil {
				return res, err
			}
		}
	}
	res.Attempt = r.attempt()
	return res, nil
}

// ExpireCode marks the code of resend seq Expired when it is still pending
// and past its expiry, and returns the verification's status afterwards
// ("" when the verification is gone).
func ExpireCode(ctx context.Context, db *storage.DB, tenant string, person int64, kind Kind, address string, seq int) (storage.VerificationStatus, error) {
	var st storage.VerificationStatus
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		r, err := lockVerification(ctx, tx, tenant, person, kind, address)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Seq == seq && r.Status == string(storage.VerificationPending) && r.Expired {
			if err := settle(ctx, tx, tenant, person, kind, address, &r, storage.VerificationExpired, "expired"); err != nil {
				return err
			}
		}
		st = storage.VerificationStatus(r.Status)
		return nil
	})
	return st, err
}

// FailCode marks the verification of resend seq Failed (its code could not
// be delivered), unless a newer resend or a final status came first.
func FailCode(ctx context.Context, db *storage.DB, tenant string, person int64, kind Kind, address string, seq int, reason string) error {
	return db.InTx(ctx, func(tx *sqlx.Tx) error {
		r, err := lockVerification(ctx, tx, tenant, person, kind, address)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		switch storage.VerificationStatus(r.Status) {
		case storage.VerificationVerified, storage.VerificationExpired, storage.VerificationFailed:
			return nil
		}
		if r.Seq != seq {
			return nil
		}
		return settle(ctx, tx, tenant, person, kind, address, &r, storage.VerificationFailed, reason)
	})
}

// PendingVerifications lists the tenant's live codes of one kind with the
// plain code, for the testing operations.
func PendingVerifications(ctx context.Context, q Querier, tenant string, kind Kind) ([]PendingCode, error) {
	out := []PendingCode{}
	err := q.SelectContext(ctx, &out, `
		SELECT v.kind, v.address, v.person_id, coalesce(p.directory_id, '') AS directory_id, v.testing_code, v.attempts, v.sent_at, v.expires_at
		FROM directory_verifications v JOIN people p ON p.id = v.person_id
		WHERE v.tenant_id = $1 AND v.kind = $2 AND v.status = 'Pending' AND v.expires_at > now() AND v.testing_code IS NOT NULL
		ORDER BY v.sent_at, v.id`, tenant, kind)
	if err != nil {
		return nil, fmt.Errorf("list pending verifications: %w", err)
	}
	return out, nil
}

// forgetVerification removes the verification state of a removed address.
func forgetVerification(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, kind Kind, address string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM directory_verifications WHERE tenant_id = $1 AND person_id = $2 AND kind = $3 AND address = $4`,
		tenant, person, kind, address); err != nil {
		return fmt.Errorf("delete verification: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM directory_verification_nonces WHERE tenant_id = $1 AND person_id = $2 AND kind = $3 AND address = $4`,
		tenant, person, kind, address); err != nil {
		return fmt.Errorf("delete nonces: %w", err)
	}
	return nil
}
