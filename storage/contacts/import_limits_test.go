package contacts_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// importFile stages csv and finishes the import as list name.
func importFile(ctx context.Context, db *storage.DB, tenant, name, csv string) (contacts.ImportResult, error) {
	im, err := contacts.BeginImport(ctx, db, tenant, 0)
	if err != nil {
		return contacts.ImportResult{}, err
	}
	defer im.Rollback()
	if err := im.Stage(ctx, strings.NewReader(csv)); err != nil {
		return contacts.ImportResult{}, err
	}
	return im.Finish(ctx, name, "")
}

// userWithEmails creates a directory user holding n email addresses,
// a0@example.com on; past the limit only by committing despite the
// refusal, as a user could hold them before the limit existed.
func userWithEmails(t *testing.T, ctx context.Context, db *storage.DB, tenant string, n int) int64 {
	t.Helper()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	person, err := directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{Profile: directory.Profile{FirstName: "Ada", LastName: "L"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var le *storage.LimitError
		if _, err := directory.AddEmail(ctx, tx, tenant, person, fmt.Sprintf("a%d@example.com", i), "work"); err != nil && !errors.As(err, &le) {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return person
}

// TestAnImportRowAddingNoAddressPassesAContactOverTheLimit: a contact
// holding more email addresses than a person may (given them before the
// limit) still takes a row that names addresses it has, with its other
// values; a row adding one address more is a row problem.
func TestAnImportRowAddingNoAddressPassesAContactOverTheLimit(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	person := userWithEmails(t, ctx, db, tenant, storage.MaxEmailsPerPerson+1)
	id := strconv.FormatInt(person, 10)
	res, err := importFile(ctx, db, tenant, "same", "id,firstName,lastName,emails\n"+id+",Augusta,,a0@example.com;a1@example.com\n")
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated != 1 || res.Skipped != 0 || len(res.Problems) != 0 {
		t.Fatalf("a row adding no address: %+v", res)
	}
	res, err = importFile(ctx, db, tenant, "more", "id,firstName,lastName,emails\n"+id+",Ada,,a0@example.com;new@example.com\n")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("would have %d email addresses", storage.MaxEmailsPerPerson+2)
	if res.Updated != 0 || res.Skipped != 1 || len(res.Problems) != 1 || res.Problems[0].Column != "emails" ||
		!strings.Contains(res.Problems[0].Message, want) {
		t.Fatalf("a row adding an address: %+v", res)
	}
	u, err := directory.GetUser(ctx, db, tenant, "main", person)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := directory.ContactInformation(ctx, db, tenant, person)
	if err != nil || u.FirstName != "Augusta" || len(ci.Emails) != storage.MaxEmailsPerPerson+1 {
		t.Fatalf("%s with %d addresses (%v)", u.FirstName, len(ci.Emails), err)
	}
}

// TestAnImportAndTheDirectoryAddingTheLastAddressDoNotBothPass races an
// import giving a contact its last email address within the limit with the
// user adding another one through the directory, which holds the user's
// row, in both orders: whichever comes second counts the first's address
// and is refused, the contact ends at the limit, and neither deadlocks.
func TestAnImportAndTheDirectoryAddingTheLastAddressDoNotBothPass(t *testing.T) {
	t.Parallel()
	for _, directoryFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("directory first ", directoryFirst), func(t *testing.T) {
			t.Parallel()
			ctx, db, tenant, _ := stacktest.DBTenants(t)
			person := userWithEmails(t, ctx, db, tenant, storage.MaxEmailsPerPerson-1)
			csv := "id,firstName,lastName,emails\n" + strconv.FormatInt(person, 10) + ",,,imported@example.com\n"

			change, err := db.BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = change.Rollback() }()
			var wg sync.WaitGroup
			var res contacts.ImportResult
			var imported, added error
			if directoryFirst {
				if _, err := directory.LockUser(ctx, change, tenant, "main", person); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() { res, imported = importFile(ctx, db, tenant, "imported", csv) })
				storagetest.WaitBlocked(t, db, "FROM contact_import")
				if _, added = directory.AddEmail(ctx, change, tenant, person, "added@example.com", "work"); added == nil {
					added = change.Commit()
				}
				wg.Wait()
			} else {
				// The import locks the contact's row (KEY SHARE) before it
				// counts, and holds it until it commits: a share lock held
				// elsewhere stops it at writing the contact's new name,
				// the directory's change queues behind both, and the share
				// lock goes.
				share, err := db.BeginTxx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = share.Rollback() }()
				if _, err := share.ExecContext(ctx, `SELECT 1 FROM people WHERE id = $1 FOR SHARE`, person); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					res, imported = importFile(ctx, db, tenant, "imported", strings.Replace(csv, ",,,", ",Augusta,,", 1))
				})
				storagetest.WaitBlocked(t, db, "WITH upd AS")
				wg.Go(func() {
					added = db.InTx(ctx, func(tx *sqlx.Tx) error {
						if _, err := directory.LockUser(ctx, tx, tenant, "main", person); err != nil {
							return err
						}
						_, err := directory.AddEmail(ctx, tx, tenant, person, "added@example.com", "work")
						return err
					})
				})
				storagetest.WaitBlocked(t, db, "AND id = $3 FOR UPDATE")
				if err := share.Rollback(); err != nil {
					t.Fatal(err)
				}
				wg.Wait()
			}
			if imported != nil {
				t.Fatalf("import: %v", imported)
			}
			var le *storage.LimitError
			importPassed := res.Updated == 1 && res.Skipped == 0
			importRefused := res.Updated == 0 && res.Skipped == 1 && len(res.Problems) == 1
			switch {
			case directoryFirst && (added != nil || !importRefused):
				t.Fatalf("directory first: added %v, import %+v", added, res)
			case !directoryFirst && (!errors.As(added, &le) || !importPassed):
				t.Fatalf("import first: added %v, import %+v", added, res)
			}
			ci, err := directory.ContactInformation(ctx, db, tenant, person)
			if err != nil || len(ci.Emails) != storage.MaxEmailsPerPerson {
				t.Fatalf("%d addresses (%v)", len(ci.Emails), err)
			}
		})
	}
}
