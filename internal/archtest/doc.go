// Package archtest holds the tests of the tree's layering rules (see
// ARCHITECTURE.md, "Dependencies run one way"); it has no code of its own.
package archtest
