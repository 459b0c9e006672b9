// Package envlist edits a process environment held as os.Environ returns
// it: a []string of "KEY=VALUE" entries, where a later entry for a key wins
// (as exec.Cmd.Env treats duplicates). It is what tracer/cupti/launch and
// tracer/rocprof/launch build a traced child's environment with.
package envlist

import (
	"os"
	"strings"
)

// Clone returns a copy of env (Options.Env of the launchers), or of
// os.Environ() when env is nil, for the edits below to work on.
func Clone(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append([]string(nil), env...)
}

// Lookup returns the value of the last entry for key in env, and whether
// there is one.
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Unset returns env without any entry for the given keys, in the same
// order. It filters in place: the result shares env's array, so the
// caller must use the result, not env, afterwards.
func Unset(env []string, keys ...string) []string {
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, key := range keys {
			drop = drop || k == key
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// Set returns env with every entry for key removed (as Unset, in place)
// and "key=value" appended last.
func Set(env []string, key, value string) []string {
	return append(Unset(env, key), key+"="+value)
}
