// Package fileout writes an output file whole or not at all: into a
// temporary file beside it, renamed into place once complete, so a failed
// or interrupted export never leaves a half-written file under the name
// the user asked for.
package fileout

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Mode is the permission of a finished file: readable by all, as
// os.Create gives under the usual umask 022 (a temporary file is 0600).
const Mode = 0o644

// Write calls write with a buffered writer (1 MiB) on a temporary file in
// path's folder and renames the file to path when write, the flush and the
// close succeed; otherwise it removes the temporary file and path is left
// as it was. Errors name path: "cannot create a file in DIR", write's
// error wrapped as "PATH: …", or the rename's.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Chmod(Mode); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot move the finished file to %s: %w", path, err)
	}
	return nil
}
