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
	"sync/atomic"
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
	// own goroutine (at most MaxPendingAuth at once, the oldest evicted
	// past it), so a client that sends nothing delays no other rank.
	authOnce                              sync.Once
	authed                                chan net.Conn // authenticated connections for Accept
	done                                  chan struct{} // closed when the listener fails or closes
	err                                   error         // the listener's error, set before done closes
	pending                               pendingSet
	accepted, badToken, timedOut, evicted atomic.Uint64
}

// AuthStats returns the counts of the TCP server's connections so far
// (zero for a Unix socket server).
func (s *Server) AuthStats() AuthStats {
	return AuthStats{Accepted: s.accepted.Load(), BadToken: s.badToken.Load(), TimedOut: s.timedOut.Load(), Evicted: s.evicted.Load()}
}

// MaxPendingAuth bounds the TCP connections waiting to present their token
// (each for at most AuthTimeout), MaxPendingPerPeer those from one remote
// address. A connection past either bound does not wait for a slot and is
// not refused: it evicts the oldest pending connection (of its own peer
// when that peer is at its bound). A real rank sends its token with its
// first packet and is checked within a round trip, so the oldest pending
// connections are the ones that send nothing: reconnecting clients that
// never authenticate cannot keep a rank out (64 of them did).
const (
	MaxPendingAuth    = 64
	MaxPendingPerPeer = 16
	AuthTimeout       = 2 * time.Second
)

// AuthStats counts a TCP server's connections: authenticated, and refused
// for a wrong token (or handshake), for no token within AuthTimeout, or
// evicted by newer ones while pending.
type AuthStats struct {
	Accepted, BadToken, TimedOut, Evicted uint64
}

// Refused is the connections refused, for whatever reason.
func (a AuthStats) Refused() uint64 { return a.BadToken + a.TimedOut + a.Evicted }

// pendingSet holds the connections waiting for their token check.
type pendingSet struct {
	mu      sync.Mutex
	seq     uint64
	conns   map[net.Conn]pendingConn
	perPeer map[string]int
}

type pendingConn struct {
	peer string
	seq  uint64
}

// add registers c from peer and returns the connection it evicts (nil
// when there is room).
func (p *pendingSet) add(c net.Conn, peer string) net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var victim net.Conn
	if p.perPeer[peer] >= MaxPendingPerPeer || len(p.conns) >= MaxPendingAuth {
		same := p.perPeer[peer] >= MaxPendingPerPeer
		var oldest uint64
		for vc, e := range p.conns {
			if (!same || e.peer == peer) && (victim == nil || e.seq < oldest) {
				victim, oldest = vc, e.seq
			}
		}
		p.removeLocked(victim)
	}
	p.seq++
	p.conns[c] = pendingConn{peer: peer, seq: p.seq}
	p.perPeer[peer]++
	return victim
}

// remove forgets c; it reports whether c was still pending (not evicted).
func (p *pendingSet) remove(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.removeLocked(c)
}

func (p *pendingSet) removeLocked(c net.Conn) bool {
	e, ok := p.conns[c]
	if !ok {
		return false
	}
	delete(p.conns, c)
	if p.perPeer[e.peer]--; p.perPeer[e.peer] == 0 {
		delete(p.perPeer, e.peer)
	}
	return true
}

// peerOf is c's remote host (no port): the unit of MaxPendingPerPeer.
func peerOf(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// authMagic starts a TCP client's handshake: "RLKA", u16 LE token length,
// the token; then the wire stream proper.
var authMagic = [4]byte{'R', 'L', 'K', 'A'}

// ErrAuth is returned by Dial when a TCP address carries no token.
var ErrAuth = errors.New("wire: tcp address has no token (expected tcp:HOST:PORT#TOKEN)")

// ListenTCP listens on hostport (e.g. "0.0.0.0:0" for ranks on other hosts)
// and returns the address to put in RLKTOP_SOCKET: "tcp:HOST:PORT#TOKEN"
// with a fresh random 128-bit token. Accept returns only connections whose
// first bytes present the token (checked in constant time within
// AuthTimeout);
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

// ListenAddr is the address listened on (HOST:PORT, or the socket path),
// without the token: what may be shown.
func (s *Server) ListenAddr() string { return s.ln.Addr().String() }

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
// goroutine of its own, evicting the oldest pending ones past the bounds.
func (s *Server) acceptAuth() {
	s.pending.conns = map[net.Conn]pendingConn{}
	s.pending.perPeer = map[string]int{}
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.err = err
			close(s.done)
			return
		}
		if v := s.pending.add(c, peerOf(c)); v != nil {
			s.evicted.Add(1)
			v.Close()
		}
		go func() {
			res := s.checkToken(c)
			if !s.pending.remove(c) {
				c.Close() // evicted while it waited: counted then
				return
			}
			switch res {
			case authBad:
				s.badToken.Add(1)
			case authTimeout:
				s.timedOut.Add(1)
			}
			if res != authOK {
				c.Close()
				return
			}
			s.accepted.Add(1)
			select {
			case s.authed <- c:
			case <-s.done:
				c.Close()
			}
		}()
	}
}

// Results of checkToken.
const (
	authOK = iota
	authBad
	authTimeout
)

func (s *Server) checkToken(c net.Conn) int {
	c.SetReadDeadline(time.Now().Add(AuthTimeout))
	defer c.SetReadDeadline(time.Time{})
	fail := func(err error) int {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return authTimeout
		}
		return authBad
	}
	var hdr [6]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return fail(err)
	}
	if [4]byte(hdr[:4]) != authMagic {
		return authBad
	}
	n := int(hdr[4]) | int(hdr[5])<<8
	if n != len(s.token) {
		return authBad
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(c, got); err != nil {
		return fail(err)
	}
	if subtle.ConstantTimeCompare(got, s.token) != 1 {
		return authBad
	}
	return authOK
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
