package wire

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// EnvSocket is the environment variable through which rlktop tells a
// traced child where to connect: the path of a Unix socket (optionally
// prefixed "unix:"), or "tcp:HOST:PORT#TOKEN" from ListenTCP. Tracers call
// DialEnv.
const EnvSocket = "RLKTOP_SOCKET"

// SocketName is the socket's file name inside the per-run directory.
const SocketName = "wire.sock"

// ErrNoSocket is returned by DialEnv when RLKTOP_SOCKET is unset or empty.
var ErrNoSocket = errors.New("wire: " + EnvSocket + " is not set (run the command under `rlktop run`)")

// Server listens for traced processes (one connection per process/rank).
type Server struct {
	ln    net.Listener
	dir   string // Unix: the per-run directory; "" for TCP
	addr  string
	token []byte // TCP: the secret every client must present first

	// TCP: connections are authenticated off the accept path, each in its
	// own goroutine (at most MaxPendingAuth at once), so a client that
	// sends nothing delays no other rank.
	authOnce sync.Once
	authed   chan net.Conn // authenticated connections for Accept
	done     chan struct{} // closed when the listener fails or closes
	err      error         // the listener's error, set before done closes
}

// MaxPendingAuth bounds the TCP connections waiting to present their token
// (each for at most 5 s); more are closed at once.
const MaxPendingAuth = 64

// authMagic starts a TCP client's handshake: "RLKA", u16 LE token length,
// the token; then the wire stream proper.
var authMagic = [4]byte{'R', 'L', 'K', 'A'}

// ErrAuth is returned by Dial when a TCP address carries no token.
var ErrAuth = errors.New("wire: tcp address has no token (expected tcp:HOST:PORT#TOKEN)")

// ListenTCP listens on hostport (e.g. "0.0.0.0:0" for ranks on other hosts)
// and returns the address to put in RLKTOP_SOCKET: "tcp:HOST:PORT#TOKEN"
// with a fresh random 128-bit token. Accept returns only connections whose
// first bytes present the token (checked in constant time within 5 s);
// others are closed. Anyone who can read the child's environment can
// connect: prefer Listen (Unix socket, 0700 directory) on one host.
func ListenTCP(hostport string) (*Server, string, error) {
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return nil, "", fmt.Errorf("wire: listen on tcp %s: %w", hostport, err)
	}
	token := hex.EncodeToString(tok)
	addr := "tcp:" + ln.Addr().String() + "#" + token
	return &Server{ln: ln, addr: addr, token: []byte(token)}, addr, nil
}

// Listen creates a fresh directory with mode 0700 (os.MkdirTemp, then
// chmod), listens on the Unix socket SocketName inside it, and returns the
// server and the address to put in the child's RLKTOP_SOCKET. Only the
// user running rlktop can connect. Close removes the directory.
func Listen() (*Server, string, error) {
	dir, err := os.MkdirTemp("", "rlktop-")
	if err != nil {
		return nil, "", fmt.Errorf("wire: cannot create the socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("wire: chmod 0700 %s: %w", dir, err)
	}
	path := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("wire: listen on %s: %w (a path over ~107 bytes fails: set TMPDIR to a shorter directory)", path, err)
	}
	return &Server{ln: ln, dir: dir, addr: path}, path, nil
}

// Addr returns the socket path (the value for RLKTOP_SOCKET).
func (s *Server) Addr() string { return s.addr }

// Dir returns the per-run directory holding the socket.
func (s *Server) Dir() string { return s.dir }

// Accept waits for the next traced process to connect. On a TCP server it
// skips (closing them) connections that do not present the token.
func (s *Server) Accept() (net.Conn, error) {
	if s.token == nil {
		return s.ln.Accept()
	}
	s.authOnce.Do(func() {
		s.authed = make(chan net.Conn)
		s.done = make(chan struct{})
		go s.acceptAuth()
	})
	select {
	case c := <-s.authed:
		return c, nil
	case <-s.done:
		return nil, s.err
	}
}

// acceptAuth accepts TCP connections and checks each one's token in a
// goroutine of its own.
func (s *Server) acceptAuth() {
	pending := make(chan struct{}, MaxPendingAuth)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.err = err
			close(s.done)
			return
		}
		select {
		case pending <- struct{}{}:
		default:
			c.Close() // MaxPendingAuth clients already hold a slot
			continue
		}
		go func() {
			defer func() { <-pending }()
			if !s.checkToken(c) {
				c.Close()
				return
			}
			select {
			case s.authed <- c:
			case <-s.done:
				c.Close()
			}
		}()
	}
}

func (s *Server) checkToken(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	var hdr [6]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || [4]byte(hdr[:4]) != authMagic {
		return false
	}
	n := int(hdr[4]) | int(hdr[5])<<8
	if n != len(s.token) {
		return false
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(c, got); err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, s.token) == 1
}

// Close stops listening and removes the per-run directory. Accepted
// connections stay open.
func (s *Server) Close() error {
	err := s.ln.Close()
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// Dial connects to a server address as Listen or ListenTCP returned it
// ("/path", "unix:/path" or "tcp:HOST:PORT#TOKEN"), waiting at most timeout.
func Dial(addr string, timeout time.Duration) (net.Conn, error) {
	if rest, ok := strings.CutPrefix(addr, "tcp:"); ok {
		hostport, token, ok := strings.Cut(rest, "#")
		if !ok || token == "" {
			return nil, ErrAuth
		}
		c, err := net.DialTimeout("tcp", hostport, timeout)
		if err != nil {
			return nil, fmt.Errorf("wire: connect to rlktop at tcp %s: %w", hostport, err)
		}
		hs := append(authMagic[:], byte(len(token)), byte(len(token)>>8))
		if _, err := c.Write(append(hs, token...)); err != nil {
			c.Close()
			return nil, fmt.Errorf("wire: send token to %s: %w", hostport, err)
		}
		return c, nil
	}
	path := strings.TrimPrefix(addr, "unix:")
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, fmt.Errorf("wire: connect to rlktop at %s: %w", path, err)
	}
	return c, nil
}

// DialEnv is Dial on $RLKTOP_SOCKET; it returns ErrNoSocket when unset.
func DialEnv(timeout time.Duration) (net.Conn, error) {
	addr := os.Getenv(EnvSocket)
	if addr == "" {
		return nil, ErrNoSocket
	}
	return Dial(addr, timeout)
}
