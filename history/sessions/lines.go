package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxLine bounds a line read from a harness's file: a longer one is
// skipped (a variable for the tests).
var maxLine = 16 << 20

// eachLine calls fn with each line of r, without its line feed, and
// returns the number of lines skipped for being over maxLine. Memory
// holds one line at most.
func eachLine(r io.Reader, fn func(line []byte)) (long int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case over:
		case len(buf)+len(chunk) > maxLine+1:
			over, buf = true, buf[:0]
		case errors.Is(err, bufio.ErrBufferFull) || buf != nil:
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line := chunk
		if buf != nil {
			line = buf
		}
		switch {
		case over:
			long++
		case len(bytes.TrimSpace(line)) > 0:
			fn(bytes.TrimSuffix(line, []byte("\n")))
		}
		buf, over = nil, false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return long, nil
			}
			return long, err
		}
	}
}
