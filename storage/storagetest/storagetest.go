// Package storagetest reads and changes, for tests, what the API does not
// show: a tenant's recorded events and their dispatch, the stored rows of a
// delivery batch or an alert, the smoke runs' workflows, the tenant's phone
// numbers, rows holding people's data, stored verification codes, the age
// of reserved nonces, uploads' claims on their objects, the custom fields
// copied for an alert's recipients, and contacts' custom fields past the
// limits, as stored before them; and how many rows of a table a
// statement's plan read. Every function is scoped to a tenant, but for
// those that watch the test database's sessions, with which a test lines
// transactions up to race them, the lock of every tenant's address points
// that holds reads of them off, and RowsRead, which reads a plan rather
// than the database.
// Only tests import it.
package storagetest
