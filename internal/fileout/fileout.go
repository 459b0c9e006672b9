// Package fileout writes an output file whole or not at all: into a
// temporary file beside it, renamed into place once complete, so a failed
// or interrupted export never leaves a half-written file under the name
// the user asked for. A path that names a device or a FIFO (/dev/null,
// /dev/stdout, a pipe from the shell) is written in place instead: such a
// node must never be replaced by a regular file.
package fileout

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Mode is the permission of a new file: readable by all, as os.Create
// gives under the usual umask 022 (a temporary file is 0600). A regular
// file written over keeps its own permission bits.
const Mode = 0o644

// ErrNotFile is returned for a path that names a directory, a socket, a
// block device or another node that is neither a regular file, a
// character device nor a FIFO.
var ErrNotFile = errors.New("not a regular file, a character device or a FIFO")

// Write calls write with a buffered writer (1 MiB) on a temporary file in
// path's folder and renames the file to path when write, the flush and the
// close succeed; otherwise it removes the temporary file and path is left
// as it was. A path whose target (symbolic links followed) is a character
// device or a FIFO is opened and written in place, never created or
// replaced (a FIFO without a reader is an error, not a wait); a directory,
// socket or block device is refused with ErrNotFile. Errors name path:
// "cannot create a file in DIR", write's error wrapped as "PATH: …", or
// the rename's.
func Write(path string, write func(io.Writer) error) error {
	mode := fs.FileMode(Mode)
	if fi, err := os.Stat(path); err == nil {
		switch t := fi.Mode().Type(); {
		case t == 0:
			if li, err := os.Lstat(path); err == nil && li.Mode().IsRegular() {
				mode = li.Mode().Perm()
			}
		case IsNode(fi):
			return writeInPlace(path, false, write)
		default:
			return fmt.Errorf("%s: %w (%v); give a file name", path, ErrNotFile, t)
		}
	}
	return replace(path, mode, write)
}

// replace writes a temporary file of mode beside path with write (through
// a 1 MiB buffer) and renames it to path; on any error the temporary file
// is removed and path left as it was.
func replace(path string, mode fs.FileMode, write func(io.Writer) error) (err error) {
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
	if err = f.Chmod(mode); err != nil {
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

// IsNode reports whether fi (from os.Stat or os.Lstat) is a character
// device or a FIFO: an output node written in place, never replaced.
func IsNode(fi fs.FileInfo) bool {
	t := fi.Mode().Type()
	return t&fs.ModeCharDevice != 0 || t == fs.ModeNamedPipe
}

// OpenNode opens an existing character device or FIFO at path for
// writing. O_NONBLOCK makes opening a FIFO nobody reads fail (ENXIO)
// instead of waiting forever; the file is then written through Go's
// poller like a pipe, so a slow reader slows the writer but never fails
// it. nofollow adds O_NOFOLLOW (a symbolic link at path is an error).
// Errors: "PATH: a FIFO nobody reads: start its reader first", or the
// open's own error.
func OpenNode(path string, nofollow bool) (*os.File, error) {
	flags := os.O_WRONLY | syscall.O_NONBLOCK
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			return nil, fmt.Errorf("%s: a FIFO nobody reads: start its reader first", path)
		}
		return nil, err
	}
	return f, nil
}

// writeInPlace writes to an existing device or FIFO (see OpenNode).
func writeInPlace(path string, nofollow bool, write func(io.Writer) error) error {
	f, err := OpenNode(path, nofollow)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WritePrivate writes data to path as a file of mode 0600 only its owner
// can read: a private temporary file beside path, renamed over it. A
// symbolic link or another user's file at path is replaced, never written
// through (where the folder's sticky bit forbids replacing another user's
// file, the rename's error is returned). A character device or FIFO at
// path itself (/dev/stdout, a pipe a script reads the address from) is
// written in place, never replaced; one nobody reads is an error.
func WritePrivate(path string, data []byte) error {
	write := func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
	if li, err := os.Lstat(path); err == nil && IsNode(li) {
		return writeInPlace(path, true, write)
	}
	return replace(path, 0o600, write)
}
