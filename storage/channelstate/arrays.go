package channelstate

import (
	"database/sql/driver"
	"strconv"
	"strings"

	"github.com/lib/pq"
)

func array(s []string) driver.Valuer { return pq.StringArray(s) }

// int64Array is a bigint[] with NULLs for missing values.
type int64Array []*int64

// Value implements driver.Valuer.
func (a int64Array) Value() (driver.Value, error) {
	parts := make([]string, len(a))
	for i, v := range a {
		parts[i] = "NULL"
		if v != nil {
			parts[i] = strconv.FormatInt(*v, 10)
		}
	}
	return "{" + strings.Join(parts, ",") + "}", nil
}
