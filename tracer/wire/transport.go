package wire

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// EnvSocket is the environment variable through which rlktop tells a
// traced child where to connect: the path of a Unix socket (optionally
// prefixed "unix:"). Tracers call DialEnv.
const EnvSocket = "RLKTOP_SOCKET"

// SocketName is the socket's file name inside the per-run directory.
const SocketName = "wire.sock"

// ErrNoSocket is returned by DialEnv when RLKTOP_SOCKET is unset or empty.
var ErrNoSocket = errors.New("wire: " + EnvSocket + " is not set (run the command under `rlktop run`)")

// Server listens for traced processes (one connection per process/rank).
type Server struct {
	ln   net.Listener
	dir  string
	addr string
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

// Accept waits for the next traced process to connect.
func (s *Server) Accept() (net.Conn, error) { return s.ln.Accept() }

// Close stops listening and removes the per-run directory. Accepted
// connections stay open.
func (s *Server) Close() error {
	err := s.ln.Close()
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// Dial connects to a server address as Listen returned it ("/path" or
// "unix:/path"), waiting at most timeout.
func Dial(addr string, timeout time.Duration) (net.Conn, error) {
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
