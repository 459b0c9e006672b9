package tracefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// resyncGzip decompresses a gzip stream (RFC 1952) and, where the
// deflate data is corrupt, goes on at the next sync-flush marker (the
// empty stored block 00 00 ff ff that a writer flushed after each record,
// as rlktop's recorder does after every frame), with the last 32 KiB of
// output as the dictionary. What it yields after a restart is right
// where it does not refer back into the damage; the format's own checks
// (a recording frame's CRC-32C) tell the rest. Its trailer check then
// fails (gzip.ErrChecksum): only a format whose records carry their own
// check may use it (Open retries a recording so).
type resyncGzip struct {
	br       *bufio.Reader
	fr       io.ReadCloser
	hist     []byte
	last     []byte // the output of the last Read without error
	mode     resyncMode
	crc      uint32
	size     uint32
	members  int
	restarts int
	err      error
}

// resyncMode is how resyncGzip restarts the decompressor after damage:
// its dictionary, the output that restarted deflate data may refer back
// to. Neither is right for every damage: a damaged block that failed at
// once gave no output, and the blocks after it refer back across it, so
// the output before it is off by the block's length (resyncLastBlock
// stands in the block before it, a recorder's frames being much alike);
// one that first gave garbage left that in the output (resyncHistory).
// Open reads with each and keeps the reading with more events.
type resyncMode uint8

const (
	resyncNone      resyncMode = iota
	resyncHistory              // the last 32 KiB of output as it came
	resyncLastBlock            // that, then the last Read's output again, in place of the damaged block
)

func newResyncGzip(br *bufio.Reader, mode resyncMode) *resyncGzip {
	return &resyncGzip{br: br, mode: mode}
}

// header reads a member's header; io.EOF at a clean end after a member.
func (z *resyncGzip) header() error {
	var h [10]byte
	if _, err := io.ReadFull(z.br, h[:]); err != nil {
		if z.members > 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
		if z.members > 0 {
			return io.EOF // not gzip after a member: ignored, as gzipCounter does
		}
		return gzip.ErrHeader
	}
	flg := h[3]
	if flg&4 != 0 { // FEXTRA
		var l [2]byte
		if _, err := io.ReadFull(z.br, l[:]); err != nil {
			return io.ErrUnexpectedEOF
		}
		if _, err := z.br.Discard(int(binary.LittleEndian.Uint16(l[:]))); err != nil {
			return io.ErrUnexpectedEOF
		}
	}
	for _, bit := range []byte{8, 16} { // FNAME, FCOMMENT: zero-terminated
		if flg&bit != 0 {
			if _, err := z.br.ReadBytes(0); err != nil {
				return io.ErrUnexpectedEOF
			}
		}
	}
	if flg&2 != 0 { // FHCRC
		if _, err := z.br.Discard(2); err != nil {
			return io.ErrUnexpectedEOF
		}
	}
	z.fr = flate.NewReader(z.br)
	z.crc, z.size = 0, 0
	return nil
}

// resync skips to just after the next 00 00 ff ff in the compressed data
// and restarts the decompressor there; false at the end of the stream.
func (z *resyncGzip) resync() bool {
	var last uint32
	for {
		c, err := z.br.ReadByte()
		if err != nil {
			return false
		}
		last = last<<8 | uint32(c)
		if last == 0x0000ffff {
			dict := z.hist
			if z.mode == resyncLastBlock && len(z.last) > 0 {
				dict = append(bytes.Clone(z.hist), z.last...)
			}
			z.fr = flate.NewReaderDict(z.br, dict)
			z.restarts++
			return true
		}
	}
}

func (z *resyncGzip) Read(p []byte) (int, error) {
	for {
		if z.err != nil {
			return 0, z.err
		}
		if z.fr == nil {
			if err := z.header(); err != nil {
				z.err = err
				continue
			}
		}
		n, err := z.fr.Read(p)
		if n > 0 {
			z.crc = crc32.Update(z.crc, crc32.IEEETable, p[:n])
			z.size += uint32(n)
			z.hist = append(z.hist, p[:n]...)
			if len(z.hist) > 64<<10 {
				z.hist = append(z.hist[:0], z.hist[len(z.hist)-32<<10:]...)
			}
		}
		var ce flate.CorruptInputError
		if err == nil && n > 0 {
			z.last = append(z.last[:0], p[:n]...)
		}
		switch {
		case err == io.EOF:
			var tr [8]byte
			if _, terr := io.ReadFull(z.br, tr[:]); terr != nil {
				z.err = io.ErrUnexpectedEOF
			} else if z.restarts > 0 || binary.LittleEndian.Uint32(tr[:4]) != z.crc || binary.LittleEndian.Uint32(tr[4:]) != z.size {
				z.err = gzip.ErrChecksum
			}
			z.fr = nil
			z.members++
		case errors.As(err, &ce):
			if !z.resync() {
				z.err = io.ErrUnexpectedEOF
			}
		case err != nil:
			z.err = err
		}
		if n > 0 {
			return n, nil
		}
	}
}
