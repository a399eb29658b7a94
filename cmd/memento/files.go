package main

import (
	"io"
	"os"
)

// openInput opens a named input file, or returns stdin for "-".
func openInput(stdin io.Reader, name string) (io.Reader, func(), error) {
	if name == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}
