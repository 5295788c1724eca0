package contactcsv

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Writer writes contacts in the layout Reader reads, neutralising every cell
// a spreadsheet would evaluate as a formula. Lines end in CRLF (RFC 4180).
type Writer struct {
	csv        *csv.Writer
	customKeys []string
	rec        []string
}

// NewWriter writes the header row, with one custom.<key> column per custom
// key, to w.
func NewWriter(w io.Writer, customKeys []string) (*Writer, error) {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	header := append([]string{}, Columns...)
	for _, k := range customKeys {
		header = append(header, CustomPrefix+k)
	}
	if err := cw.Write(header); err != nil {
		return nil, fmt.Errorf("write csv header: %w", err)
	}
	return &Writer{csv: cw, customKeys: customKeys, rec: make([]string, len(header))}, nil
}

// Write writes one contact.
func (w *Writer) Write(r Row) error {
	phones := map[string][]string{}
	for _, p := range r.Phones {
		col, ok := columnOfPhoneType[p.Type]
		if !ok {
			col = ColOtherPhones
		}
		phones[col] = append(phones[col], phoneItem(col, p.Number, p.CanText, p.CanCall))
	}
	chat := make([]string, len(r.ChatUsers))
	for i, c := range r.ChatUsers {
		chat[i] = c.Platform + ":" + c.UserID
	}
	id := ""
	if r.ID > 0 {
		id = strconv.FormatInt(r.ID, 10)
	}
	fixed := []string{
		id, r.ExternalID, r.FirstName, r.MiddleName, r.LastName, r.Language, r.TimeZone,
		strings.Join(r.Emails, ListSeparator),
		strings.Join(phones[ColMobilePhones], ListSeparator),
		strings.Join(phones[ColHomePhones], ListSeparator),
		strings.Join(phones[ColWorkPhones], ListSeparator),
		strings.Join(phones[ColOtherPhones], ListSeparator),
		strings.Join(phones[ColFaxPhones], ListSeparator),
		strings.Join(r.Roles, ListSeparator),
		strings.Join(chat, ListSeparator),
	}
	n := copy(w.rec, fixed)
	for i, k := range w.customKeys {
		w.rec[n+i] = r.Custom[k]
	}
	for i, v := range w.rec {
		w.rec[i] = Neutralize(v)
	}
	if err := w.csv.Write(w.rec); err != nil {
		return fmt.Errorf("write csv row: %w", err)
	}
	return nil
}

// Flush writes buffered rows to the underlying writer.
func (w *Writer) Flush() error {
	w.csv.Flush()
	if err := w.csv.Error(); err != nil {
		return fmt.Errorf("flush csv: %w", err)
	}
	return nil
}
