package billing

import "testing"

func TestTotal(t *testing.T) {
	got := Total([]Line{{"pen", 2, 150}, {"pad", 1, 399}})
	if got != 699 {
		t.Errorf("Total() = %d, want 699", got)
	}
}
