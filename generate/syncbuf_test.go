package main

import "github.com/seed-3bc194a6/workforce/internal/syncbuf"

// syncBuffer is a buffer several goroutines write.
type syncBuffer = syncbuf.Buffer
