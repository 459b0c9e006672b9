package fileout

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWrite: a finished file holds what was written, mode 0644, and no
// temporary file is left; a failed write leaves an existing file as it
// was and no temporary file either.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat %v, mode %v: want 0644", err, fi.Mode().Perm())
	}
	boom := errors.New("boom")
	err = Write(path, func(w io.Writer) error { io.WriteString(w, "second, half"); return boom })
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom wrapped", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("after a failed write the file holds %q, want the first one", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d entries in the folder, want only out.json", len(es))
	}
}

// TestWriteKeepsNodes: a FIFO and a character device named as the output
// are written in place and stay what they were (the rename used to put a
// regular file in their place: as root, /dev/null replaced); a directory
// is refused; a FIFO nobody reads is an error, not a hang.
func TestWriteKeepsNodes(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, func(w io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "nobody reads") {
		t.Errorf("FIFO without a reader: error %v, want one saying nobody reads it", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	var err error
	for i := 0; i < 200; i++ { // until the reader has opened its end
		if err = Write(fifo, func(w io.Writer) error { _, err := io.WriteString(w, "through the pipe"); return err }); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "through the pipe" {
		t.Errorf("the reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("after the write %s is %v (%v), want still a FIFO", fifo, fi.Mode(), err)
	}
	if err := Write(dir, func(w io.Writer) error { return nil }); !errors.Is(err, ErrNotFile) {
		t.Errorf("a directory: error %v, want ErrNotFile", err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the character-device case (mknod) is not run")
		return
	}
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod of a null device: %v", err)
	}
	if err := Write(null, func(w io.Writer) error { _, err := io.WriteString(w, "gone"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode().Type()&fs.ModeCharDevice == 0 {
		t.Errorf("after the write %s is %v (%v), want still a character device", null, fi.Mode(), err)
	}
}

// TestWriteKeepsMode: a regular file written over keeps its permission
// bits (a private 0600 file stays private).
func TestWriteKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "private.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
	}
}

// TestWritePrivate: a symbolic link planted at the name is replaced by a
// 0600 file and its target never written (os.WriteFile wrote the token
// through it); a file of mode 0666 there becomes the 0600 file.
func TestWritePrivate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	link := filepath.Join(dir, "listen.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivate(link, []byte("secret\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was created (%v)", err)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v (%v), want a regular 0600 file", link, fi.Mode(), err)
	}
	open := filepath.Join(dir, "open.txt")
	os.WriteFile(open, []byte("x"), 0o666)
	os.Chmod(open, 0o666)
	if err := WritePrivate(open, []byte("secret\n")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(open); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("pre-created 0666 file: mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(open); string(b) != "secret\n" {
		t.Errorf("holds %q", b)
	}
}

// TestWritePrivateKeepsNodes: a FIFO named as the private output is
// written in place and stays a FIFO (the rename replaced it with a regular
// file); without a reader it is an error, not a hang.
func TestWritePrivateKeepsNodes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "addr")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WritePrivate(fifo, []byte("x")); err == nil || !strings.Contains(err.Error(), "nobody reads") {
		t.Errorf("FIFO without a reader: error %v, want one saying nobody reads it", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	var err error
	for i := 0; i < 200; i++ {
		if err = WritePrivate(fifo, []byte("127.0.0.1:1/token\n")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "127.0.0.1:1/token\n" {
		t.Errorf("the reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("%s is %v (%v) after the write, want the FIFO", fifo, fi.Mode(), err)
	}
	// A character device of its own (the null device's numbers, 1:3), so
	// that a broken WritePrivate replaces a node in the test's folder, not
	// the machine's /dev/null; making one needs root.
	dev := filepath.Join(filepath.Dir(fifo), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no character device made (%v): that part needs root", err)
		return
	}
	if err := WritePrivate(dev, []byte("x")); err != nil {
		t.Errorf("%s: %v", dev, err)
	}
	if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is %v after the write, want a character device", dev, fi.Mode())
	}
}
