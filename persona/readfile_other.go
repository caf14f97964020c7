//go:build !unix

package persona

import "os"

func readFile(path string, _ bool, _ []byte) ([]byte, error) { return os.ReadFile(path) }
