package history

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSince reads a duration of --since: Go's (90m, 24h, 1h30m), or a
// number of days (7d).
func ParseSince(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || math.IsNaN(days) || days > 1e5 {
			return 0, fmt.Errorf("not a number of days")
		}
		d = time.Duration(days * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("not a duration (90m, 24h, 7d)")
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("not a positive duration")
	}
	return d, nil
}
