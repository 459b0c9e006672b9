package tracer

// Strings interns names. ID 0 is always "". Not safe for concurrent use.
type Strings struct {
	list  []string
	ids   map[string]StrID
	bytes int64 // the bytes of the strings interned here (a Frozen copy counts its own)
}

// NewStrings returns a table holding only "".
func NewStrings() *Strings {
	return &Strings{list: []string{""}, ids: map[string]StrID{"": 0}}
}

// Frozen returns a table holding the strings t holds now, with the same
// IDs, that shares their storage: t may go on interning (in another
// goroutine too) while the copy is read, as existing entries never change.
// It costs no copy of the strings; the copy's own first Intern or Lookup
// indexes them.
func (t *Strings) Frozen() *Strings {
	return &Strings{list: t.list[:len(t.list):len(t.list)]}
}

// index builds the lookup map of a Frozen table.
func (t *Strings) index() {
	t.ids = make(map[string]StrID, len(t.list))
	for i, s := range t.list {
		t.ids[s] = StrID(i)
	}
}

// Intern returns s's ID, adding it if new. It copies nothing: callers that
// pass a string aliasing a reused buffer must pass a copy.
func (t *Strings) Intern(s string) StrID {
	if t.ids == nil {
		t.index()
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := StrID(len(t.list))
	t.bytes += int64(len(s))
	t.list = append(t.list, s)
	t.ids[s] = id
	return id
}

// InternBytes is Intern for a byte slice; it allocates only for a new name.
func (t *Strings) InternBytes(b []byte) StrID {
	if t.ids == nil {
		t.index()
	}
	if id, ok := t.ids[string(b)]; ok { // no allocation: compiler optimisation
		return id
	}
	return t.Intern(string(b))
}

// Bytes returns the bytes of the strings Intern added to t (bytes of
// text, not counting the table's own overhead): what an importer bounds,
// as a file of distinct names costs memory by their length, not their
// number.
func (t *Strings) Bytes() int64 { return t.bytes }

// Lookup returns the ID of s and whether it is present.
func (t *Strings) Lookup(s string) (StrID, bool) {
	if t.ids == nil {
		t.index()
	}
	id, ok := t.ids[s]
	return id, ok
}

// Get returns the string for id ("" when out of range).
func (t *Strings) Get(id StrID) string {
	if int(id) < len(t.list) {
		return t.list[id]
	}
	return ""
}

// Len returns the number of strings, "" included.
func (t *Strings) Len() int { return len(t.list) }
