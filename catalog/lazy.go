package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// Lazy is a catalog parsed when it is first needed (Catalog). A report of
// a warehouse that holds it already needs only its Hash, which for the
// embedded catalog takes no parse (DefaultHash): parsing and validating
// the embedded YAML was 35 M instructions, a sixth of `triage RUN`'s on a
// saved report (bench/README.md, issue 38's figures).
type Lazy struct {
	parse func() *Catalog
	hash  func() string
}

// LazyDefault is the embedded catalog, parsed on the first call of
// Catalog (once; every call returns that parse).
func LazyDefault() *Lazy {
	return &Lazy{parse: sync.OnceValue(Default), hash: DefaultHash}
}

// Parsed is c (a --catalog FILE, a catalog built in code) as a Lazy.
func Parsed(c *Catalog) *Lazy {
	return &Lazy{parse: func() *Catalog { return c }, hash: sync.OnceValue(c.Hash)}
}

// Catalog returns the catalog, parsing it on the first call.
func (l *Lazy) Catalog() *Catalog { return l.parse() }

// Hash is Catalog().Hash(), without the parse for the embedded catalog.
func (l *Lazy) Hash() string { return l.hash() }

// Prefetch parses the catalog on another goroutine, for a caller that
// will need it (to install it, to ingest) after other work, such as
// opening the warehouse, which the parse then overlaps.
func (l *Lazy) Prefetch() { go l.parse() }

// DefaultHash is Default().Hash(): the hash recorded for the embedded file
// (embeddedHash, default_hash.go) when the file's sha256 is the one it was
// recorded for, else computed from a parse. A stale record thus costs a
// parse, never a wrong hash; TestDefaultHashCurrent fails until it is
// rewritten.
func DefaultHash() string { return defaultHash() }

var defaultHash = sync.OnceValue(func() string { return recordedOr(embeddedFileSum, embeddedHash) })

// recordedOr is hash when sum is the embedded file's sha256, else the hash
// of the parsed file.
func recordedOr(sum, hash string) string {
	if embeddedSum() == sum {
		return hash
	}
	return Default().Hash()
}

// embeddedSum is the sha256 of the embedded file's bytes, hex.
func embeddedSum() string {
	sum := sha256.Sum256(embedded)
	return hex.EncodeToString(sum[:])
}
