package contacts_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestImportingAnAddressWhileItsUserAddsItNeverDeadlocks races the two
// writers of a person's addresses: an import that gives a contact a new
// email address, and the user adding the same address through the
// directory, which holds the person's row. The directory's change takes
// the person first and waits for the import to finish; both must finish,
// the address stored once.
func TestImportingAnAddressWhileItsUserAddsItNeverDeadlocks(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	const address = "race@example.com"
	var person int64
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{Profile: directory.Profile{FirstName: "Ada", LastName: "L"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	change, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = change.Rollback() }()
	if _, err := directory.LockUser(ctx, change, tenant, "main", person); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var imported error
	wg.Go(func() {
		_, imported = importFile(ctx, db, tenant, "imported", "id,firstName,lastName,emails\n"+strconv.FormatInt(person, 10)+",,,"+address+"\n")
	})
	storagetest.WaitBlocked(t, db, "FROM contact_import")
	_, added := directory.AddEmail(ctx, change, tenant, person, address, "work")
	if added == nil {
		added = change.Commit()
	}
	wg.Wait()
	if added != nil && !errors.Is(added, storage.ErrConflict) {
		t.Fatalf("add the address: %v", added)
	}
	if imported != nil {
		t.Fatalf("import: %v", imported)
	}
	ci, err := directory.ContactInformation(ctx, db, tenant, person)
	if err != nil || len(ci.Emails) != 1 || ci.Emails[0].Address != address {
		t.Fatalf("addresses %+v (%v)", ci.Emails, err)
	}
}
