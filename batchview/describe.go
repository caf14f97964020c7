package batchview

import (
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// Describe is a running task's event as the display shows it: what the
// agent does, its names quoted; "" for an event that says nothing new
// (usage, the end).
func Describe(e report.Event) string {
	switch e.Type {
	case report.EventStarted:
		return "started"
	case report.EventToolUse:
		s := firstLine(e.Tool)
		if e.Detail != "" {
			s += " " + firstLine(e.Detail)
		}
		if e.Status == "failed" || e.Status == "denied" {
			s += " (" + e.Status + ")"
		}
		return s
	case report.EventMessage:
		return firstLine(e.Text)
	case report.EventError:
		return "error: " + firstLine(e.Text)
	case report.EventSync:
		return "sync: " + e.Action + " " + quote.Name(e.Path)
	case report.EventNetwork:
		return "network denied: " + quote.Text(report.NetworkDenied{Host: e.Host, Port: e.Port}.String())
	}
	return ""
}

// firstLine is the first line of s that is not blank, quoted, at most
// maxText characters: the display's line is cut to the terminal anyway.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return cut(quote.Text(l), maxText)
		}
	}
	return ""
}

// maxText is the most characters of an event's text the display keeps.
const maxText = 200

// cut is s up to its first newline, at most n characters, the last an
// ellipsis when cut.
func cut(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
