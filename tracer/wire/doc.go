// Package wire is rlktop's framed binary protocol between a traced process
// (the built-in loop's gotrace, the CUPTI injection library, the
// rocprofiler tool, the Python agent) and rlktop, and the format of
// rlktop's native recordings, which are the same frame stream in a gzip
// file.
//
// The format itself — preamble and version, frame header and checksum,
// every frame type's payload, transports, recordings — is specified once,
// in FORMAT.md in this directory; VersionMajor and VersionMinor are the
// version this code reads and writes, and the Type constants the frame
// types.
//
// Receivers read a stream with a Decoder, which hands each frame, decoded,
// to a Sink (names mapped into the receiver's table, times in host ns): the
// live session and the recording reader are its two Sinks. Senders write
// with a Writer or, in a traced process, an AsyncSender, whose Send never
// blocks (a full queue drops the batch and counts it). Listen and
// ListenTCP are the transports' server ends, DialEnv the child's.
package wire
