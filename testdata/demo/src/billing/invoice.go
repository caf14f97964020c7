// Package billing computes invoices.
package billing

// Line is one invoice line: a quantity of a product at a unit price in cents.
type Line struct {
	Product   string
	Quantity  int
	UnitCents int64
}

// Total returns the invoice total in cents.
func Total(lines []Line) int64 {
	var sum int64
	for _, l := range lines {
		sum += int64(l.Quantity) * l.UnitCents
	}
	return sum
}
